import { Command } from 'commander';

import { BadRequestError } from '../core/contract/errors.js';
import type { BrainModelPrice } from '../core/contract/BrainAtom.js';
import { reportReadCommandFailure, type ReadCommandContext } from './genRunsCommand.js';

/** .what = one atom a run here could use: its slug, where it comes from, its window and price (USD per million tokens) */
export interface AtomListing {
  slug: string;
  /** `bhrain` for ours, else the rhachet-brains-* package it was found in */
  source: string;
  description: string;
  contextWindowTokens: number;
  price: BrainModelPrice | null;
  /** the rhachet spec as the supplier published it (absent for ours) */
  spec?: unknown;
}

/** .what = every atom a run here could use: ours (one per model of the table), then the discovered rhachet ones */
const listAtoms = async (cwd: string, warn: (message: string) => void): Promise<AtomListing[]> => {
  // loaded only now: `bhrain --help` stays fast, and no rhachet package is loaded by any other command
  const { genBrainAtom, MODEL_ATOM_SLUGS } = await import('../providers/genBrainAtom.js');
  const { discoverRhachetAtoms } = await import('./rhachet/discoverRhachetAtoms.js');
  const { genBrainAtomOfRhachet } = await import('../providers/rhachet/genBrainAtomOfRhachet.js');
  const ours = MODEL_ATOM_SLUGS.map((slug) => {
    const atom = genBrainAtom({ slug });
    return {
      slug,
      source: 'bhrain',
      description: atom.description,
      contextWindowTokens: atom.spec.contextWindowTokens,
      price: atom.spec.price,
    };
  });
  const discovered = (await discoverRhachetAtoms({ cwd }, { warn })).map((found) => {
    const atom = genBrainAtomOfRhachet({ atom: found.atom });
    return {
      slug: found.slug,
      source: found.package,
      description: atom.description,
      contextWindowTokens: atom.spec.contextWindowTokens,
      price: atom.spec.price,
      spec: found.atom.spec ?? null,
    };
  });
  return [...ours, ...discovered];
};

/** .what = a price as `in $3 / out $15` per million tokens, or `unknown` */
const formatPrice = (price: BrainModelPrice | null): string => (price ? `in $${price.input} / out $${price.output} per Mtok` : 'unknown');

/**
 * .what = the `bhrain atoms` command: every atom `--atom` takes here, bhrain's own and the rhachet brain atoms of the
 *         repository's rhachet-brains-* packages, with window, price and source; `-o json` for one object
 * .why = a rhachet user sees which of their brains bhrain.struct.v1 can run on, under which slug, before a run
 */
export const genAtomsCommand = (context: ReadCommandContext & { cwd?: string } = {}): Command => {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const setExitCode = context.setExitCode ?? ((code: number) => void (process.exitCode = code));
  return new Command('atoms')
    .description(
      "list the atoms --atom takes here: bhrain's own, and the rhachet brain atoms of this repository's rhachet-brains-* packages",
    )
    .option(
      '-o, --output <format>',
      'text (a table) or json (one object: {schemaVersion, atoms: [{slug, source, description, contextWindowTokens, price, spec?}]})',
      'text',
    )
    .action(async (options: { output: string }) => {
      const json = options.output === 'json';
      try {
        if (!['text', 'json'].includes(options.output))
          throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
        const atoms = await listAtoms(context.cwd ?? process.cwd(), (message) => stderr.write(`warning: ${message}\n`));
        if (json) return void stdout.write(`${JSON.stringify({ schemaVersion: 1, atoms })}\n`);
        const rows = [
          ['SLUG', 'SOURCE', 'WINDOW', 'PRICE'],
          ...atoms.map((atom) => [atom.slug, atom.source, String(atom.contextWindowTokens), formatPrice(atom.price)]),
        ];
        const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
        stdout.write(
          `${rows
            .map((row) =>
              row
                .map((cell, column) => cell.padEnd(widths[column]))
                .join('  ')
                .trimEnd(),
            )
            .join('\n')}\n`,
        );
      } catch (error) {
        reportReadCommandFailure({ command: 'atoms', error, json }, { stdout, stderr, setExitCode });
      }
    });
};

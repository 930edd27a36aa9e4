import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { findRepoRoot } from '../../agent/git/findRepoRoot.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { didYouMean } from '../../core/text/findNearestName.js';
import { BRAIN_ATOM_SLUGS, genBrainAtom } from '../../providers/genBrainAtom.js';
import { genBrainAtomOfRhachet } from '../../providers/rhachet/genBrainAtomOfRhachet.js';
import { genRhachetSuppliesContext } from '../../providers/rhachet/rhachetSupplierCreds.js';
import type { BrainAtom } from '../../core/contract/BrainAtom.js';
import { getRhachetSlugFull, isRhachetSupplierAtom, type RhachetSupplierAtom } from '../../rhachet/contract/RhachetSupplierAtom.js';

/** .what = one rhachet brain atom found here: its full slug, the atom, and the package it came from */
export interface DiscoveredRhachetAtom {
  slug: string;
  atom: RhachetSupplierAtom;
  package: string;
}

/** .what = the `rhachet-brains-*` dependencies (and devDependencies) of a package.json; none when it is absent */
const readBrainPackages = async (packageJsonPath: string): Promise<string[]> => {
  const text = await readFile(packageJsonPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return [];
  let json: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(
      `${packageJsonPath} is not valid JSON (${(error as Error).message}): fix it, so its rhachet-brains-* packages can be found`,
    );
  }
  return Object.keys({ ...json.dependencies, ...json.devDependencies }).filter((name) => name.startsWith('rhachet-brains-'));
};

/**
 * .what = every rhachet brain atom a run here could use, by rhachet's discovery rule: the `rhachet-brains-*`
 *         dependencies of the git root's package.json (cwd's outside a repository), each resolved with require.resolve
 *         from that package.json (CommonJS conditions), then import()ed; every getBrainAtomsBy* export is called; a
 *         package that fails to load, or whose collector throws, is skipped with a warning; the first of a slug wins
 * .why = `--atom <slug>` and `bhrain atoms` find the brains a rhachet user already has; nothing is loaded unless asked
 */
export const discoverRhachetAtoms = async (
  input: { cwd: string },
  context: { warn: (message: string) => void },
): Promise<DiscoveredRhachetAtom[]> => {
  const root = (await findRepoRoot({ cwd: input.cwd })) ?? input.cwd;
  const packageJsonPath = join(root, 'package.json');
  const found: DiscoveredRhachetAtom[] = [];
  const requireHere = createRequire(packageJsonPath);
  for (const name of await readBrainPackages(packageJsonPath)) {
    let exported: Record<string, unknown>;
    try {
      exported = (await import(pathToFileURL(requireHere.resolve(name)).href)) as Record<string, unknown>;
    } catch (error) {
      context.warn(
        `could not load brain package "${name}" (from ${packageJsonPath}): ${(error as Error)?.message ?? error}; its atoms are skipped`,
      );
      continue;
    }
    try {
      const atoms = Object.entries(exported)
        .filter(([key, value]) => key.startsWith('getBrainAtomsBy') && typeof value === 'function')
        .flatMap(([, collect]) => {
          const result = (collect as () => unknown)();
          return Array.isArray(result) ? result : [];
        })
        .filter(isRhachetSupplierAtom);
      for (const atom of atoms) {
        const slug = getRhachetSlugFull(atom);
        if (!found.some((known) => known.slug === slug)) found.push({ slug, atom, package: name });
      }
    } catch (error) {
      context.warn(`could not extract brains from package "${name}": ${(error as Error)?.message ?? error}; its atoms are skipped`);
    }
  }
  return found;
};

/**
 * .what = the atom behind a slug that is not one of ours: a discovered rhachet brain atom of that full slug, its creds
 *         bound from the environment as rhachet binds them; an unknown slug is a BadRequestError naming the close ones
 */
export const resolveRhachetAtom = async (
  input: { slug: string; cwd: string },
  context: { env: Record<string, string | undefined>; warn: (message: string) => void },
): Promise<BrainAtom> => {
  const discovered = await discoverRhachetAtoms({ cwd: input.cwd }, context);
  const match = discovered.find((found) => found.slug === input.slug);
  if (match) return genBrainAtomOfRhachet({ atom: match.atom, context: genRhachetSuppliesContext(match.atom.repo, context.env) });
  // with no rhachet atom here, the error is the one an unknown slug of ours has always had
  if (!discovered.length) genBrainAtom({ slug: input.slug });
  const ours = BRAIN_ATOM_SLUGS.filter((slug) => !slug.includes('<'));
  const names = [...ours, ...discovered.map((found) => found.slug)];
  const near =
    didYouMean(input.slug, names) ||
    (discovered.find((found) => found.slug.endsWith(`/${input.slug}`))
      ? `did you mean '${discovered.find((found) => found.slug.endsWith(`/${input.slug}`))!.slug}'? `
      : '');
  throw new BadRequestError(
    `unknown atom '${input.slug}': ${near}it is not one of bhrain's (${ours.slice(0, 6).join(', ')}, ...) nor a rhachet brain atom of this repository's rhachet-brains-* packages (${discovered.length ? discovered.map((found) => found.slug).join(', ') : 'none found'}). List them with: bhrain atoms`,
  );
};

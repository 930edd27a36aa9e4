import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import type { BrainLog } from '../core/contract/BrainContext.js';
import type { BrainEpisode } from '../core/contract/BrainEpisode.js';
import type { BrainSeries } from '../core/contract/BrainSeries.js';
import { BadRequestError, RefSchemaVersionError } from '../core/contract/errors.js';
import type { BrainRefStore } from '../core/continuation/genBrainRefStore.js';

/** the serialized kind each flag expects, and the other flag, for a file of the other kind */
const KINDS = {
  series: { flag: '--on-series', serialized: 'BrainSeries', other: { flag: '--on-episode', serialized: 'BrainEpisode' } },
  episode: { flag: '--on-episode', serialized: 'BrainEpisode', other: { flag: '--on-series', serialized: 'BrainSeries' } },
} as const;

/** reads and verifies a file written by `bhrain export`; every failure names the flag, the file and the fix */
const readRefFile = async (
  input: { path: string; kind: 'series' | 'episode' },
  context: { log?: BrainLog },
): Promise<BrainSeries | BrainEpisode> => {
  const { flag, serialized, other } = KINDS[input.kind];
  if (!input.path)
    throw new BadRequestError(
      `${flag} @ names no file: give the path of a file written by \`bhrain export <ref> > file.json\`, as ${flag} @file.json`,
    );
  const path = resolve(input.path);
  const named = `${flag} @${input.path}`;
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new BadRequestError(
      error.code === 'ENOENT'
        ? `${named}: there is no file ${path}; give the path of a file written by \`bhrain export <ref> > file.json\``
        : error.code === 'EISDIR'
          ? `${named}: ${path} is a directory; give the path of a file written by \`bhrain export <ref> > file.json\``
          : `${named}: cannot read ${path} (${error.code ?? error.message}); check its permissions`,
      { cause: error },
    );
  });
  // loaded only for a ref file: it needs zod
  const { parseBrainRef } = await import('../core/contract/parseBrainRef.js');
  try {
    return parseBrainRef({ text, kind: serialized }, context).ref;
  } catch (error) {
    if (error instanceof RefSchemaVersionError) throw new RefSchemaVersionError(`${named}: ${error.message}`, { cause: error });
    // a file of the other kind is a mix-up of flags, not damage: say which flag takes it
    const kind = (() => {
      try {
        return (JSON.parse(text) as { kind?: unknown })?.kind;
      } catch {
        return undefined;
      }
    })();
    if (kind === other.serialized)
      throw new BadRequestError(
        `${named}: ${path} holds a ${other.serialized}, not a ${serialized}; pass it with ${other.flag} @${input.path}`,
        { cause: error },
      );
    throw new BadRequestError(
      `${named}: ${path} did not verify and will not be used (${(error as Error).message}); export the ref again from the store that holds it, or run without ${flag}`,
      { cause: error },
    );
  }
};

/**
 * .what = the series or episode that a `--on-series` / `--on-episode` value names: a hash or unique prefix in the
 *         ref store, or `@path/to/file.json`, a file written by `bhrain export`, verified like the store
 * .why = refs travel: "plan in CI job A, act in job B" works with an artifact, with no shared store
 */
export async function resolveOnRef(
  input: { spec: string; kind: 'series' },
  context: { store: BrainRefStore; log?: BrainLog },
): Promise<BrainSeries>;
export async function resolveOnRef(
  input: { spec: string; kind: 'episode' },
  context: { store: BrainRefStore; log?: BrainLog },
): Promise<BrainEpisode>;
export async function resolveOnRef(
  input: { spec: string; kind: 'series' | 'episode' },
  context: { store: BrainRefStore; log?: BrainLog },
): Promise<BrainSeries | BrainEpisode> {
  if (input.spec.startsWith('@')) return readRefFile({ path: input.spec.slice(1), kind: input.kind }, context);
  return input.kind === 'series' ? context.store.getSeries(input.spec, context) : context.store.getEpisode(input.spec, context);
}

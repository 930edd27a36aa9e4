import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { BrainLog } from '../contract/BrainContext.js';
import type { BrainEpisode } from '../contract/BrainEpisode.js';
import type { BrainSeries } from '../contract/BrainSeries.js';
import { BadRequestError, BhrainError, EpisodeCompactedError, RefSchemaVersionError } from '../contract/errors.js';
import type { ParsedBrainRef } from '../contract/parseBrainRef.js';
import { serializeBrainEpisode, serializeBrainSeries } from '../contract/serializeBrainRef.js';

export { getBhrainHome } from './getBhrainHome.js';

/** .what = the store could not write a ref (disk full, read-only, permissions); earlier refs are untouched */
export class RefStoreWriteError extends BhrainError {
  readonly code = 'REF_STORE_WRITE';
}

type Kind = 'episode' | 'series' | 'compacted';
const DIRS: Record<Kind, string> = { episode: 'episodes', series: 'series', compacted: 'compacted' };

/**
 * .what = a content-addressed store of episodes and series on disk, written atomically
 * .why = refs outlive processes: `--on-series <hash>` continues from any directory; a write either lands whole or
 *        not at all (temp file, fsync, rename), and a damaged file is detected by its hash and never served; a ref saved
 *        by an older bhrain is verified under its own version's hash rule and migrated, with a notice through the caller's log
 */
export const genBrainRefStore = (input: { home: string }) => {
  const dirOf = (kind: Kind) => join(input.home, 'refs', DIRS[kind]);

  const write = async (kind: Kind, hash: string, text: string): Promise<string> => {
    const dir = dirOf(kind);
    const path = join(dir, `${hash}.json`);
    try {
      await mkdir(dir, { recursive: true });
      // content-addressed: an existing file with exactly this content is kept; one damaged (even at the same size) is replaced
      if (
        await readFile(path, 'utf8').then(
          (found) => found === text,
          () => false,
        )
      )
        return path;
      const temp = join(dir, `.${hash}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
      try {
        const handle = await open(temp, 'w');
        try {
          await handle.writeFile(text);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, path);
      } catch (error) {
        // a partial temp file (disk full mid-write) would hold the space the user must free: it goes too
        await rm(temp, { force: true }).catch(() => undefined);
        throw error;
      }
      return path;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const hint =
        code === 'ENOSPC'
          ? ': the disk is full; free space and run again'
          : code === 'EISDIR'
            ? `: ${path} is a directory where the ref file should be; remove it`
            : '';
      throw new RefStoreWriteError(
        `could not save the ${kind} ${hash} to the ref store at ${dir} (${code ?? (error as Error).message})${hint}. Earlier refs are intact`,
        {
          cause: error,
        },
      );
    }
  };

  /** the hashes of the stored refs of one kind that start with a prefix; none when the store has no such folder yet */
  const findHashes = async (kind: Kind, prefix: string): Promise<string[]> => {
    const names = await readdir(dirOf(kind)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[];
      throw new BadRequestError(
        `cannot read the ref store at ${dirOf(kind)} (${error.code ?? error.message})${error.code === 'ENOTDIR' ? ': it is not a directory; check BHRAIN_HOME' : ''}`,
        { cause: error },
      );
    });
    return names.filter((name) => name.endsWith('.json') && name.startsWith(prefix)).map((name) => name.slice(0, -'.json'.length));
  };

  /** a full hash, or a unique prefix of at least 8 characters, to the file that holds it */
  const locate = async (kind: Kind, ref: string): Promise<string> => {
    const flag = kind === 'episode' ? '--on-episode' : '--on-series';
    if (!/^[0-9a-f]{8,64}$/.test(ref))
      throw new BadRequestError(
        `${flag} ${ref} is not a ref: expected the hex hash (at least 8 characters) that a prior run printed, or @file.json for a file written by \`bhrain export\``,
      );
    const matches = (await findHashes(kind, ref)).map((hash) => `${hash}.json`);
    if (!matches.length)
      throw new BadRequestError(
        `${kind} not found: no ${kind} ${ref} in the ref store at ${dirOf(kind)}. Check the ref a prior run printed (or set BHRAIN_HOME to the store it used), or start a new ${kind} by running without ${flag}`,
      );
    if (matches.length > 1)
      throw new BadRequestError(`${flag} ${ref} is ambiguous: ${matches.length} ${kind}s start with it; give more characters of the hash`);
    return join(dirOf(kind), matches[0]);
  };

  const read = async <T>(kind: Kind, ref: string, parse: (text: string) => ParsedBrainRef<T>): Promise<ParsedBrainRef<T>> => {
    const path = await locate(kind, ref);
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      // a directory (or an unreadable file) where the ref file should be is the caller's to fix, not a crash
      throw new BadRequestError(
        error.code === 'EISDIR'
          ? `the ${kind} ${ref} cannot be read: ${path} is a directory where the ref file should be; remove it, or start a new ${kind}`
          : `the ${kind} ${ref} cannot be read from ${path} (${error.code ?? error.message}); check its permissions, or start a new ${kind}`,
        { cause: error },
      );
    });
    let parsed: ParsedBrainRef<T>;
    try {
      parsed = parse(text);
    } catch (error) {
      if (error instanceof RefSchemaVersionError)
        throw new RefSchemaVersionError(`the ${kind} ${ref} in the ref store cannot be read: ${error.message}`, { cause: error });
      throw new BadRequestError(
        `the ${kind} ${ref} in the ref store is corrupt and will not be used (${(error as Error).message}); start a new ${kind}`,
        {
          cause: error,
        },
      );
    }
    // a migrated ref is filed under the hash of its old version; the file name must match what the file claims
    if (!path.endsWith(`${parsed.storedHash}.json`))
      throw new BadRequestError(
        `the ${kind} file ${path} holds a ${kind} whose hash is ${parsed.storedHash}: the store is corrupt and it will not be used`,
      );
    return parsed;
  };

  const isMarkedCompacted = (hash: string) =>
    stat(join(dirOf('compacted'), `${hash}.json`)).then(
      () => true,
      () => false,
    );

  return {
    home: input.home,
    saveEpisode: (episode: BrainEpisode) => write('episode', episode.hash, serializeBrainEpisode(episode)),
    saveSeries: (series: BrainSeries) => write('series', series.hash, serializeBrainSeries(series)),
    /** the full hashes of the stored episodes and series that start with a prefix: which kind a bare ref names */
    findRefs: async (prefix: string) => ({ episodes: await findHashes('episode', prefix), series: await findHashes('series', prefix) }),
    /** an episode by full hash or unique prefix; context.log gets the notice of a migrated ref */
    getEpisode: async (ref: string, context: { log?: BrainLog } = {}) => {
      // loaded on the first read: it needs zod, which a run that only writes refs never loads
      const { parseBrainRef } = await import('../contract/parseBrainRef.js');
      const { ref: episode, storedHash } = await read('episode', ref, (text) => parseBrainRef({ text, kind: 'BrainEpisode' }, context));
      // a migrated episode was marked compacted under its old hash
      if ((await isMarkedCompacted(episode.hash)) || (storedHash !== episode.hash && (await isMarkedCompacted(storedHash))))
        throw new EpisodeCompactedError(
          `episode ${episode.hash} has been compacted: a later run summarized it into the recap that opens the next episode of its series. Continue with --on-series instead`,
          { episode, series: null },
        );
      return episode;
    },
    /** records that a series compacted these episodes, so --on-episode refuses them in any later process */
    markCompacted: async (hashes: readonly string[]) => {
      for (const hash of hashes) await write('compacted', hash, '');
    },
    /** whether a series compacted this episode, as recorded by markCompacted in this or any earlier process */
    isCompacted: isMarkedCompacted,
    /** a series by full hash or unique prefix; context.log gets the notice of a migrated ref */
    getSeries: async (ref: string, context: { log?: BrainLog } = {}) => {
      const { parseBrainRef } = await import('../contract/parseBrainRef.js');
      return (await read('series', ref, (text) => parseBrainRef({ text, kind: 'BrainSeries' }, context))).ref;
    },
  };
};

/** .what = a ref store instance */
export type BrainRefStore = ReturnType<typeof genBrainRefStore>;

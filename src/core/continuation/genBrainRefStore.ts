import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { BrainLog } from '../contract/BrainContext.js';
import type { BrainEpisode } from '../contract/BrainEpisode.js';
import type { BrainSeries } from '../contract/BrainSeries.js';
import {
  BadRequestError,
  EpisodeCompactedError,
  RefSchemaVersionError,
  RefStoreReadError,
  RefStoreWriteError,
} from '../contract/errors.js';
import type { BrainRefBackend, BrainRefKind } from './BrainRefBackend.js';
import type { ParsedBrainRef } from '../contract/parseBrainRef.js';
import { serializeBrainEpisode, serializeBrainSeries } from '../contract/serializeBrainRef.js';

export { getBhrainHome } from './getBhrainHome.js';

export { RefStoreReadError, RefStoreWriteError } from '../contract/errors.js';
export type { BrainRefBackend, BrainRefKind } from './BrainRefBackend.js';

type Kind = BrainRefKind;
const DIRS: Record<Kind, string> = { episode: 'episodes', series: 'series', compacted: 'compacted' };

/**
 * .what = the local backend: one file per object under <home>/refs/, written atomically (temp file, fsync, rename)
 * .why = a write either lands whole or not at all; an existing file with exactly this content is kept, one damaged (even
 *        at the same size) is replaced
 */
export const genLocalRefBackend = (input: { home: string }): BrainRefBackend & { home: string } => {
  const dirOf = (kind: Kind) => join(input.home, 'refs', DIRS[kind]);
  const pathOf = (kind: Kind, hash: string) => join(dirOf(kind), `${hash}.json`);

  const write = async (kind: Kind, hash: string, text: string): Promise<string> => {
    const dir = dirOf(kind);
    const path = pathOf(kind, hash);
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
  const list = async (kind: Kind, prefix: string): Promise<string[]> => {
    const names = await readdir(dirOf(kind)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[];
      throw new RefStoreReadError(
        `cannot read the ref store at ${dirOf(kind)} (${error.code ?? error.message})${error.code === 'ENOTDIR' ? ': it is not a directory; check BHRAIN_HOME' : ''}`,
        { cause: error },
      );
    });
    return names.filter((name) => name.endsWith('.json') && name.startsWith(prefix)).map((name) => name.slice(0, -'.json'.length));
  };

  const read = async (kind: Kind, hash: string): Promise<string | null> => {
    const path = pathOf(kind, hash);
    return readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      // a directory (or an unreadable file) where the ref file should be is the caller's to fix, not a crash
      throw new RefStoreReadError(
        error.code === 'EISDIR'
          ? `the ${kind} ${hash} cannot be read: ${path} is a directory where the ref file should be; remove it, or start a new ${kind}`
          : `the ${kind} ${hash} cannot be read from ${path} (${error.code ?? error.message}); check its permissions, or start a new ${kind}`,
        { cause: error },
      );
    });
  };

  return {
    home: input.home,
    location: join(input.home, 'refs'),
    whereOf: dirOf,
    howToPoint: 'set BHRAIN_HOME to the store it used',
    write,
    list,
    read,
    has: (kind, hash) =>
      stat(pathOf(kind, hash)).then(
        () => true,
        () => false,
      ),
  };
};

/**
 * .what = a content-addressed store of episodes and series, on disk (`{ home }`, the default) or in any backend
 *         (`{ backend }`: genS3RefBackend for a bucket many runners share)
 * .why = refs outlive processes: `--on-series <hash>` continues from any directory, or any machine with a shared store;
 *        every object read is verified against its hash whatever the backend, so a damaged or forged one is detected and
 *        never served; a ref saved by an older bhrain is verified under its own version's hash rule and migrated, with a
 *        notice through the caller's log
 */
export function genBrainRefStore(input: { home: string }): BrainRefStore & { home: string };
export function genBrainRefStore(input: { backend: BrainRefBackend }): BrainRefStore;
export function genBrainRefStore(input: { home: string } | { backend: BrainRefBackend }): BrainRefStore {
  const backend = 'backend' in input ? input.backend : genLocalRefBackend({ home: input.home });

  /** a full hash, or a unique prefix of at least 8 characters, to the full hash of the object that holds it */
  const locate = async (kind: Kind, ref: string): Promise<string> => {
    const flag = kind === 'episode' ? '--on-episode' : '--on-series';
    if (!/^[0-9a-f]{8,64}$/.test(ref))
      throw new BadRequestError(
        `${flag} ${ref} is not a ref: expected the hex hash (at least 8 characters) that a prior run printed, or @file.json for a file written by \`bhrain export\``,
      );
    const matches = await backend.list(kind, ref);
    if (!matches.length)
      throw new BadRequestError(
        `${kind} not found: no ${kind} ${ref} in the ref store at ${backend.whereOf(kind)}. Check the ref a prior run printed (or ${backend.howToPoint}), or start a new ${kind} by running without ${flag}`,
      );
    if (matches.length > 1)
      throw new BadRequestError(
        `${flag} ${ref} is ambiguous: ${matches.length} ${kind === 'series' ? kind : `${kind}s`} start with it; give more characters of the hash`,
      );
    return matches[0];
  };

  const read = async <T>(kind: Kind, ref: string, parse: (text: string) => ParsedBrainRef<T>): Promise<ParsedBrainRef<T>> => {
    const hash = await locate(kind, ref);
    const text = await backend.read(kind, hash);
    // listed, then gone: a store pruned between the two
    if (text === null)
      throw new BadRequestError(
        `${kind} not found: the ${kind} ${hash} is no longer in the ref store at ${backend.whereOf(kind)}; start a new ${kind} by running without ${kind === 'episode' ? '--on-episode' : '--on-series'}`,
      );
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
    // a migrated ref is filed under the hash of its old version; the object's name must match what it claims
    if (hash !== parsed.storedHash)
      throw new BadRequestError(
        `the ${kind} ${hash} in the ref store at ${backend.whereOf(kind)} holds ${kind === 'episode' ? 'an' : 'a'} ${kind} whose hash is ${parsed.storedHash}: the store is corrupt and it will not be used`,
      );
    return parsed;
  };

  const isMarkedCompacted = (hash: string) => backend.has('compacted', hash);

  return {
    ...('home' in input ? { home: input.home } : {}),
    location: backend.location,
    saveEpisode: (episode: BrainEpisode) => backend.write('episode', episode.hash, serializeBrainEpisode(episode)),
    saveSeries: (series: BrainSeries) => backend.write('series', series.hash, serializeBrainSeries(series)),
    /** the full hashes of the stored episodes and series that start with a prefix: which kind a bare ref names */
    findRefs: async (prefix: string) => ({ episodes: await backend.list('episode', prefix), series: await backend.list('series', prefix) }),
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
      for (const hash of hashes) await backend.write('compacted', hash, '');
    },
    /** whether a series compacted this episode, as recorded by markCompacted in this or any earlier process */
    isCompacted: isMarkedCompacted,
    /** a series by full hash or unique prefix; context.log gets the notice of a migrated ref */
    getSeries: async (ref: string, context: { log?: BrainLog } = {}) => {
      const { parseBrainRef } = await import('../contract/parseBrainRef.js');
      return (await read('series', ref, (text) => parseBrainRef({ text, kind: 'BrainSeries' }, context))).ref;
    },
  } as BrainRefStore;
}

/**
 * .what = the ref store a store URL names: s3://bucket/prefix (an S3-compatible service at `endpoint` when given), or
 *         the local one in `home` when there is none
 * .why = the one opener behind act, ask, export and show; the S3 backend (and its SDK) is loaded only when a store URL
 *        is given, so a run without one loads nothing more than it did
 */
export const openBrainRefStore = async (input: {
  /** s3://bucket/prefix; undefined = the local store */
  url: string | undefined;
  home: string;
  /** an S3-compatible service's URL (BHRAIN_S3_ENDPOINT); undefined = AWS S3 */
  endpoint?: string;
  /** the environment the S3 client's region default is read from */
  env?: Record<string, string | undefined>;
}): Promise<BrainRefStore> => {
  if (input.url === undefined) return genBrainRefStore({ home: input.home });
  const { genS3RefBackend, parseS3StoreUrl } = await import('./genS3RefBackend.js');
  return genBrainRefStore({ backend: genS3RefBackend({ ...parseS3StoreUrl(input.url), endpoint: input.endpoint, env: input.env }) });
};

/** .what = a ref store instance: saves and verified reads of episodes and series, wherever its backend keeps them */
export interface BrainRefStore {
  /** the local store's home directory; absent for another backend */
  home?: string;
  /** the store as messages name it: <home>/refs, or s3://bucket/prefix */
  location: string;
  /** saves an episode under its hash; where it went */
  saveEpisode(episode: BrainEpisode): Promise<string>;
  /** saves a series under its hash; where it went */
  saveSeries(series: BrainSeries): Promise<string>;
  /** the full hashes of the stored episodes and series that start with a prefix: which kind a bare ref names */
  findRefs(prefix: string): Promise<{ episodes: string[]; series: string[] }>;
  /** an episode by full hash or unique prefix, verified; context.log gets the notice of a migrated ref */
  getEpisode(ref: string, context?: { log?: BrainLog }): Promise<BrainEpisode>;
  /** records that a series compacted these episodes, so --on-episode refuses them in any later process */
  markCompacted(hashes: readonly string[]): Promise<void>;
  /** whether a series compacted this episode */
  isCompacted(hash: string): Promise<boolean>;
  /** a series by full hash or unique prefix, verified; context.log gets the notice of a migrated ref */
  getSeries(ref: string, context?: { log?: BrainLog }): Promise<BrainSeries>;
}

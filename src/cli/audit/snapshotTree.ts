import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/**
 * .what = the directories a walk never enters, by name at any depth: git's own store, and installed packages
 * .why = `.git` changes with every git command (its objects are the repository's history, not the working directory);
 *        node_modules holds tens of thousands of files (17k, 737 MB in bhrain's own checkout) that would spend the whole
 *        budget at every start. Every other file is walked, .gitignored ones too (build output, .env): a change there is
 *        still a change the run made
 */
export const AUDIT_SKIPPED_DIRS: readonly string[] = ['.git', 'node_modules'];

/** .what = what one walk may spend: files seen, bytes hashed, wall time; the first one reached cuts the walk */
export interface SnapshotBudget {
  maxFiles: number;
  maxHashBytes: number;
  maxMs: number;
}

/** .what = the default budget: ~1 s of hashing on a CI runner, at most 20,000 files, 5 s (the guard waits at most 10 s) */
export const DEFAULT_SNAPSHOT_BUDGET: SnapshotBudget = { maxFiles: 20_000, maxHashBytes: 256 * 1024 * 1024, maxMs: 5_000 };

/** .what = the limit that cut a walk: files (maxFiles entries seen), bytes (a file not hashed), time (the walk stopped) */
export type SnapshotCut = 'files' | 'bytes' | 'time';

/** .what = one file (or symlink) as a walk saw it: its stat, and its content's sha256 when the byte budget allowed */
export interface SnapshotEntry {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  /** the content's sha256; null when not hashed (over the byte budget, or a symlink: compared by its stat, never followed) */
  hash: string | null;
}

/** .what = a walk of the working directory: every entry by its path relative to the root, and what cut it */
export interface TreeSnapshot {
  entries: Map<string, SnapshotEntry>;
  /** the directories whose every entry was recorded: a path absent from a fully listed directory is absent indeed */
  listedDirs: Set<string>;
  /** every directory the walk came upon (listed in full or not) */
  seenDirs: Set<string>;
  cuts: Set<SnapshotCut>;
}

/** files read at once in one directory */
const CONCURRENCY = 16;

/**
 * .what = the sha256 of a file's first `size` bytes (its size when the walk saw it): a small one read whole, a larger
 *         one as a stream
 * .why = memory and the byte budget stay bounded, even for a file that grows after its stat (a command left running)
 */
const hashFile = async (path: string, size: number): Promise<string> => {
  if (size <= 1024 * 1024) {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, 0);
      return createHash('sha256').update(buffer.subarray(0, bytesRead)).digest('hex');
    } finally {
      await handle.close();
    }
  }
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path, { end: size - 1 })
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
};

/** .what = whether two stats describe the same unchanged file (git's test): then its start hash still holds */
const sameStat = (a: SnapshotEntry, b: Omit<SnapshotEntry, 'hash'>): boolean =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

/**
 * .what = walks `root` (never following a symlink, never entering AUDIT_SKIPPED_DIRS), hashing each file within budget
 * .why = the audit compares two walks by content; `previous` (the start's walk) lends its hash to a file whose stat has
 *        not changed, so the end's walk reads only what changed. A file the byte budget cannot hash is kept by its stat,
 *        and the walk says `bytes` cut it; past maxFiles or maxMs the walk stops and says which
 */
export const snapshotTree = async (
  input: { root: string; budget?: SnapshotBudget; previous?: TreeSnapshot; signal?: AbortSignal },
  context: { now?: () => number } = {},
): Promise<TreeSnapshot> => {
  const budget = input.budget ?? DEFAULT_SNAPSHOT_BUDGET;
  const now = context.now ?? Date.now;
  const deadline = now() + budget.maxMs;
  const snapshot: TreeSnapshot = { entries: new Map(), listedDirs: new Set(), seenDirs: new Set(), cuts: new Set() };
  let bytesLeft = budget.maxHashBytes;
  const pending = [input.root];
  // a run that ends before its first tool call (a usage error) stops its walk: nothing holds the process's exit
  let counted = 0;
  /** .what = one file's entry: its stat, and its hash (the start's, when its stat is unchanged; else read within budget) */
  const visitFile = async (path: string, key: string): Promise<void> => {
    const stat = await lstat(path).catch(() => null);
    if (!stat) return;
    const seen = { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
    const before = input.previous?.entries.get(key);
    let hash: string | null = null;
    if (before && before.hash !== null && sameStat(before, seen)) hash = before.hash;
    else if (stat.isSymbolicLink()) hash = null;
    else if (stat.size <= bytesLeft) {
      bytesLeft -= stat.size;
      hash = await hashFile(path, stat.size).catch(() => null);
    } else snapshot.cuts.add('bytes');
    snapshot.entries.set(key, { ...seen, hash });
  };
  // a usage error ends the run before its first tool call: its walk stops, and nothing holds the process's exit
  while (pending.length && !input.signal?.aborted) {
    const dir = pending.pop()!;
    const names = await readdir(dir, { withFileTypes: true }).catch(() => null);
    if (!names) continue; // unreadable (or gone): not listed, so nothing under it is called created or deleted
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let complete = true;
    // the files of a directory are read CONCURRENCY at a time: a cold tree's latency is paid in parallel
    for (let from = 0; from < names.length && complete; from += CONCURRENCY) {
      const visits: Array<Promise<void>> = [];
      for (const dirent of names.slice(from, from + CONCURRENCY)) {
        if (counted >= budget.maxFiles) snapshot.cuts.add('files');
        if (now() > deadline) snapshot.cuts.add('time');
        if (snapshot.cuts.has('files') || snapshot.cuts.has('time')) {
          complete = false;
          break;
        }
        const path = join(dir, dirent.name);
        const key = relative(input.root, path).split(sep).join('/');
        if (dirent.isDirectory()) {
          snapshot.seenDirs.add(key);
          if (!AUDIT_SKIPPED_DIRS.includes(dirent.name)) pending.push(path);
        } else if (dirent.isFile() || dirent.isSymbolicLink()) {
          counted++;
          visits.push(visitFile(path, key));
        }
      }
      await Promise.all(visits);
    }
    if (complete) snapshot.listedDirs.add(relative(input.root, dir).split(sep).join('/'));
  }
  return snapshot;
};

/** .what = the directory a relative path is in, as listedDirs names it ('' for the root) */
const parentOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

/**
 * .what = whether a walk listed in full where `path` would be: its directory, or (a directory the walk never came upon,
 *         made or removed since) the nearest one above it that the walk came upon
 */
const listedWhere = (walk: TreeSnapshot, path: string): boolean => {
  for (let dir = parentOf(path); ; dir = parentOf(dir)) {
    if (walk.listedDirs.has(dir)) return true;
    if (walk.seenDirs.has(dir) || dir === '') return false;
  }
};

/** .what = whether an entry changed: by content when both were hashed, else by stat */
const changed = (a: SnapshotEntry, b: SnapshotEntry): boolean => (a.hash !== null && b.hash !== null ? a.hash !== b.hash : !sameStat(a, b));

/**
 * .what = the files created, changed and deleted between two walks, each sorted
 * .why = a path missing from a cut walk is not a deletion (nor a creation): only a path whose directory the other walk
 *        listed in full is called created or deleted
 */
export const diffSnapshots = (start: TreeSnapshot, end: TreeSnapshot) => {
  const created: string[] = [];
  const modified: string[] = [];
  const deleted: string[] = [];
  for (const [path, after] of end.entries) {
    const before = start.entries.get(path);
    if (!before) {
      if (listedWhere(start, path)) created.push(path);
    } else if (changed(before, after)) modified.push(path);
  }
  for (const path of start.entries.keys()) if (!end.entries.has(path) && listedWhere(end, path)) deleted.push(path);
  return { created: created.sort(), changed: modified.sort(), deleted: deleted.sort() };
};

import * as fs from 'node:fs';
import { resolve, sep } from 'node:path';

import { loadGitIgnores, type GitIgnores } from './loadGitIgnores.js';

/** a walk stops after reading this many directory entries, so no tree, however large, makes glob or grep run for ever */
export const WALK_MAX_ENTRIES = 200_000;

/** glob's walk stops after this long; grep's stops at grep's own deadline, since its time also goes to reading files */
export const WALK_MAX_MS = 10_000;

/** .what = why and where a walk stopped before its end */
export interface WalkStop {
  reason: 'entries' | 'time';
  entries: number;
  elapsedMs: number;
}

/** .what = what a walk found: files and symbolic links (never followed) under the root, unsorted, and why it stopped early */
export interface WalkResult {
  /** absolute paths, each the root, '/' and the path relative to it */
  files: string[];
  stop?: WalkStop;
}

/** .what = a caller's say on one entry, before ignore rules: keep it whatever they say, drop it, or leave it to them */
export type WalkSelection = 'include' | 'exclude' | undefined;

/**
 * .what = the files and symbolic links under a directory, walked by fdir, within an entry and time budget
 * .why = glob and the built-in grep share one walk: it skips .git and the paths hidden from the model always, and (as asked) hidden directories,
 *        node_modules and what git ignores; it lists symbolic links without entering them (a DAG of linked
 *        directories cannot multiply the paths), and the budget and the abort signal bound it
 * .note = the root itself is entered even when it is a link, or ignored: a path named explicitly is searched, as rg does;
 *         `select` sees '/'-separated paths relative to the root and runs before the ignore rules, as rg's --glob does
 */
export const walkFiles = async (input: {
  /** an absolute directory */
  root: string;
  /** skip what git ignores; undefined searches ignored files too */
  gitIgnores?: GitIgnores;
  skipHiddenDirectories: boolean;
  /** skip entries named node_modules below the root */
  skipNodeModules: boolean;
  /** absolute paths below the root (as the walk names them) that are neither listed nor entered: the hidden paths */
  hidden?: readonly string[];
  select?: (relativePath: string, isDirectory: boolean) => WalkSelection;
  /** stop after reading this many directory entries */
  maxEntries: number;
  /** stop at this time (ms since the epoch) */
  deadline: number;
  signal?: AbortSignal;
}): Promise<WalkResult> => {
  const startedAt = Date.now();
  // imported on the first walk, not at start: fdir requires picomatch from node_modules as it loads
  const { fdir } = await import('fdir');
  const root = resolve(input.root);
  // fdir names every directory with a trailing '/', the root included
  const prefix = root.endsWith('/') ? root : `${root}/`;
  const files: string[] = [];
  const rules = input.gitIgnores;
  const select = input.select;
  const hidden = input.hidden?.length ? new Set(input.hidden) : null;
  const controller = new AbortController();
  let entries = 0;
  let stop: WalkStop | undefined;
  const halt = (reason: WalkStop['reason']) => {
    stop ??= { reason, entries, elapsedMs: Date.now() - startedAt };
    controller.abort();
  };
  /** counts an entry against the budget; false once it is spent (the clock is read every 256 entries) */
  const admit = (): boolean => {
    if (stop) return false;
    if (entries >= input.maxEntries) halt('entries');
    else if ((entries & 255) === 0 && Date.now() > input.deadline) halt('time');
    else entries++;
    return !stop;
  };

  // the walk reads each directory through this: the listing it already made tells the rules about .gitignore and .git
  const readdir = ((
    path: string,
    options: { withFileTypes: true },
    callback: (error: NodeJS.ErrnoException | null, entries: fs.Dirent[]) => void,
  ) =>
    fs.readdir(path, options, (error, listed) => {
      if (error || !rules) return callback(error, listed);
      rules.enterDirectory(path, listed).then(
        () => callback(null, listed),
        () => callback(null, listed),
      );
    })) as unknown as typeof fs.readdir;

  const crawl = new fdir({ fs: { ...fs, readdir } })
    .withFullPaths()
    .withAbortSignal(controller.signal)
    .exclude((name, path) => {
      if (!admit()) return true;
      if (name === '.git') return true;
      // fdir names a directory with a trailing '/'
      if (hidden?.has(path.slice(0, -1))) return true;
      if (input.skipHiddenDirectories && name.charCodeAt(0) === 46) return true;
      if (input.skipNodeModules && name === 'node_modules') return true;
      const selected = select?.(path.slice(prefix.length, -1), true);
      if (selected !== undefined) return selected === 'exclude';
      return rules !== undefined && rules.isIgnored(path.slice(0, path.length - name.length - 1), name, true);
    })
    .filter((path) => {
      if (!admit()) return false;
      const slash = path.lastIndexOf('/');
      const name = path.slice(slash + 1);
      if (name === '.git' || (input.skipNodeModules && name === 'node_modules') || hidden?.has(path)) return false;
      const selected = select?.(path.slice(prefix.length), false);
      if (selected === 'exclude') return false;
      if (selected === undefined && rules !== undefined && rules.isIgnored(path.slice(0, slash + 1), name, false)) return false;
      // kept here, not in fdir's list, so a walk stopped by the clock still returns what it found
      files.push(path);
      return false;
    })
    .crawl(prefix)
    .withPromise();

  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  try {
    await new Promise<void>((resolvePromise, reject) => {
      crawl.then(() => resolvePromise(), reject);
      // a directory that never answers cannot hold the walk past its deadline
      timer = setTimeout(() => (halt('time'), resolvePromise()), Math.max(0, input.deadline - Date.now()));
      onAbort = () => {
        controller.abort();
        reject(input.signal?.reason);
      };
      if (input.signal?.aborted) onAbort();
      input.signal?.addEventListener('abort', onAbort, { once: true });
    });
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onAbort);
  }
  return stop ? { files, stop } : { files };
};

/** .what = what a glob or grep walk leaves out below its root (.git is left out always) */
export interface SearchSkips {
  /** git's rules, when what git ignores is skipped */
  gitIgnores?: GitIgnores;
  skipHiddenDirectories: boolean;
  skipNodeModules: boolean;
}

/** a segment that starts with '.' (not '.' or '..') and is followed by '/': the glob names a hidden directory */
const HIDDEN_DIRECTORY_SEGMENT = /(?:^|\/)\.(?!\.?\/)[^/]+\//;

/**
 * .what = decides what a search skips: what git ignores, hidden directories and node_modules, each unless the model
 *         opted in (include_ignored) or named it (the path is inside it, or the glob names it)
 * .why = glob and grep skip the same things, and both grep engines get the same answer, so their output is identical
 * .note = a root that git ignores was named explicitly: it is searched without ignore rules, as rg searches a path it
 *         is given
 */
export const genSearchSkips = async (input: { root: string; glob: string; includeIgnored: boolean }): Promise<SearchSkips> => {
  if (input.includeIgnored) return { skipHiddenDirectories: false, skipNodeModules: false };
  const gitIgnores = await loadGitIgnores({ root: input.root });
  const glob = input.glob.replace(/^!/, '');
  return {
    ...(gitIgnores.rootIgnored ? {} : { gitIgnores }),
    skipHiddenDirectories: !HIDDEN_DIRECTORY_SEGMENT.test(glob),
    skipNodeModules: !input.root.split(sep).includes('node_modules') && !glob.includes('node_modules'),
  };
};

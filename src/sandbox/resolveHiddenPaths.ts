import { lstatSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isUnder } from '../core/paths/isUnder.js';

import { getBhrainHome } from '../core/continuation/getBhrainHome.js';
import { BadRequestError } from '../core/contract/errors.js';

/**
 * .what = the credential stores every tool the model drives sees as empty or absent, as listed (`~` is the run's HOME)
 * .why = a model steered by a hostile file in the repository would otherwise read a private key or a cloud token and
 *        copy it where CI publishes it; the shadow files too, since bhrain may run as root
 */
export const DEFAULT_DENY_READ: readonly string[] = [
  '~/.ssh',
  '~/.aws',
  '~/.gnupg',
  '~/.config/gcloud',
  '~/.azure',
  '~/.kube',
  '~/.docker/config.json',
  '~/.npmrc',
  '~/.netrc',
  '~/.git-credentials',
  '~/.config/gh',
  '/etc/shadow',
  '/etc/gshadow',
  // the copies shadow-utils keeps of the two before each change
  '/etc/shadow-',
  '/etc/gshadow-',
];

/** how $BHRAIN_HOME (the ref store and run records) is listed among the hidden paths, in messages */
const BHRAIN_HOME_LISTED = '$BHRAIN_HOME';

/**
 * .what = what the tools hide from the model besides DEFAULT_DENY_READ and $BHRAIN_HOME, and what they hand back
 * .why = one shape for the bash toolbox's sandbox, the files toolbox, BhrainConfig.sandbox and the settings
 */
export interface ReadDenial {
  /** more paths to hide: absolute, or starting with `~/` */
  denyRead?: readonly string[];
  /**
   * paths handed back: a hidden path named here is not hidden, and a path here inside a hidden directory stays readable
   * (bound back into the sandbox); a directory above a hidden path hands nothing back. Absolute, or starting with `~/`.
   * A `read(<path>)` allow rule of genRulesGuard gives its path here (see BhrainPermissionGuard.allowRead)
   */
  allowRead?: readonly string[];
}

/** .what = one hidden path: as listed, absolute, and (when it exists) its real path and whether it is a directory */
export interface HiddenEntry {
  listed: string;
  path: string;
  /** null when nothing is there: nothing to hide in the sandbox, but the tools still refuse the path */
  realPath: string | null;
  isDirectory: boolean;
  /** `dev:ino` of a file that is there: a hard link to it elsewhere has other names, but the same inode */
  inode: string | null;
}

/** .what = the hidden paths of one call, and the question every tool asks of them */
export interface HiddenPaths {
  entries: readonly HiddenEntry[];
  /** paths inside a hidden entry that stay readable: handed back by allowRead, or the workspace and spill dir inside one */
  handedBack: readonly string[];
  /** the entry that hides a path (absolute, as named or real), or null when the path is readable */
  holding: (path: string) => HiddenEntry | null;
}

/** .what = a listed path made absolute: `~` and `~/…` from HOME; a relative one is a caller's mistake */
export const expandListedPath = (listed: string, home: string, what = 'sandbox.denyRead'): string => {
  if (listed === '~') return home;
  if (listed.startsWith('~/')) return join(home, listed.slice(2));
  if (isAbsolute(listed)) return resolve(listed);
  throw new BadRequestError(`${what} '${listed}' is not an absolute path: give one that starts with / or ~/, e.g. "~/.config/op"`);
};

/** .what = a path's real path when something is there (symlinks resolved), without the cost of an Error when not */
const realPathIfPresent = (path: string): { realPath: string; isDirectory: boolean; inode: string } | null => {
  try {
    let found = lstatSync(path, { throwIfNoEntry: false });
    if (!found) return null;
    // a directory above it may be a link too (~/.config to a dotfiles checkout)
    const realPath = realpathSync.native(path);
    if (realPath !== path) found = lstatSync(realPath);
    return { realPath, isDirectory: found.isDirectory(), inode: `${found.dev}:${found.ino}` };
  } catch {
    // a dangling symlink, a path under a file (ENOTDIR), one this process may not look into: nothing it can read there
    return null;
  }
};

/** .what = a directory's stat as a signature part, `-` when it cannot be stat'ed (absent, under a file, unreadable) */
const signDir = (dir: string): string | null => {
  try {
    const stats = statSync(dir, { throwIfNoEntry: false });
    return stats ? `${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}` : null;
  } catch {
    return null;
  }
};

/** .what = the places an entry names: its path as listed, and its real path when that differs */
const formsOf = (entry: HiddenEntry): string[] =>
  entry.realPath !== null && entry.realPath !== entry.path ? [entry.path, entry.realPath] : [entry.path];

/** resolutions kept, by what they were resolved from: one per toolbox and working directory in practice */
const MAX_KEPT_RESOLUTIONS = 32;
const kept = new Map<string, { dirs: readonly string[]; signature: string; hidden: HiddenPaths }>();

/**
 * .what = the directories whose listing decides which of the paths exist: each path's parent, and for a parent that is
 *         absent, the ones above it up to one that is there; with their stat as a signature
 * .why = a path created, removed, renamed or replaced by a link changes its parent's mtime and ctime: one stat per
 *        directory (5 for the defaults) says whether the last resolution still holds, where resolving costs ~25 syscalls
 */
const signParents = (paths: readonly string[]): { dirs: string[]; signature: string } => {
  const signed = new Map<string, string>();
  for (const path of paths)
    for (let dir = dirname(path); !signed.has(dir); dir = dirname(dir)) {
      const signature = signDir(dir);
      signed.set(dir, signature ?? '-');
      if (signature !== null || dirname(dir) === dir) break;
    }
  return { dirs: [...signed.keys()], signature: [...signed.values()].join('|') };
};

/** .what = the signature signParents gave, of the same directories, as they are now */
const signDirs = (dirs: readonly string[]): string => {
  let signature = '';
  for (const dir of dirs) signature += `${signature ? '|' : ''}${signDir(dir) ?? '-'}`;
  return signature;
};

/**
 * .what = the paths hidden from the model in one call: DEFAULT_DENY_READ, $BHRAIN_HOME and denyRead, less what allowRead
 *         hands back; `~` is env.HOME (the user's own when the environment has none)
 * .why = read, grep, glob, write and edit refuse them and the sandbox hides them, from one list, as the file system is
 *        at the call: a store made during a run is hidden from its next call on. The last resolution is kept while
 *        none of the directories holding the paths changed (signParents), so a call pays a stat per directory
 * .note = `readable` are paths the caller itself must read although they may lie in a hidden entry (the workspace, the
 *         session's spill dir, in $BHRAIN_HOME): they are handed back too
 */
export const resolveHiddenPaths = (
  denial: ReadDenial,
  context: { env: Record<string, string | undefined>; readable?: ReadonlyArray<string | null | undefined> },
): HiddenPaths => {
  const home = context.env.HOME || homedir();
  const readablePaths = context.readable?.filter((path): path is string => !!path).map((path) => resolve(path)) ?? [];
  // what the paths are made from, cheaply: the kept resolution is found before any path is joined
  const key = [
    home,
    context.env.BHRAIN_HOME,
    context.env.XDG_STATE_HOME,
    ...(denial.denyRead ?? []),
    '\0',
    ...(denial.allowRead ?? []),
    '\0',
    ...readablePaths,
  ].join('\n');
  const known = kept.get(key);
  if (known && signDirs(known.dirs) === known.signature) return known.hidden;
  const listed = [...DEFAULT_DENY_READ, ...(denial.denyRead ?? [])].map((each) => ({ listed: each, path: expandListedPath(each, home) }));
  listed.push({ listed: BHRAIN_HOME_LISTED, path: resolve(getBhrainHome(context.env)) });
  const allowedPaths = (denial.allowRead ?? []).map((each) => expandListedPath(each, home, 'sandbox.allowRead'));
  // signed before it resolves: a change made while it resolves shows at the next call
  const { dirs, signature } = signParents([...listed.map((each) => each.path), ...allowedPaths]);
  const hidden = resolveNow(listed, allowedPaths, readablePaths);
  kept.delete(key);
  kept.set(key, { dirs, signature, hidden });
  if (kept.size > MAX_KEPT_RESOLUTIONS) kept.delete(kept.keys().next().value!);
  return hidden;
};

/** .what = resolveHiddenPaths' work: each path looked up, handed back, and the entries left */
const resolveNow = (
  listed: ReadonlyArray<{ listed: string; path: string }>,
  allowedPaths: readonly string[],
  readablePaths: readonly string[],
): HiddenPaths => {
  const allowed = allowedPaths.flatMap((path) => {
    const real = realPathIfPresent(path)?.realPath;
    return real && real !== path ? [path, real] : [path];
  });
  const candidates: HiddenEntry[] = [];
  for (const each of listed) {
    if (each.path === '/')
      throw new BadRequestError(`sandbox.denyRead '${each.listed}' would hide the whole file system: name the paths to hide`);
    const found = realPathIfPresent(each.path);
    const entry: HiddenEntry = {
      listed: each.listed,
      path: each.path,
      realPath: found?.realPath ?? null,
      isDirectory: found?.isDirectory ?? false,
      inode: found?.inode ?? null,
    };
    // handed back whole: allowRead names the entry itself (a directory above it hands nothing back: `read(~/**)` is
    // not a way to unhide every store at once)
    if (allowed.some((allow) => formsOf(entry).includes(allow))) continue;
    candidates.push(entry);
  }
  const contains = (entry: HiddenEntry, path: string) => formsOf(entry).some((form) => isUnder(form, path));
  const handedBack = [...new Set([...allowed, ...readablePaths])].filter((path) => candidates.some((entry) => contains(entry, path)));
  /** whether a handed-back path lies between an entry and a path under it: it makes that path readable again */
  const reopened = (entry: HiddenEntry, path: string) => handedBack.some((back) => isUnder(back, path) && contains(entry, back));
  // an entry under another is hidden with it, unless a path handed back between them uncovers it (a workspace inside
  // $BHRAIN_HOME that holds a hidden path of its own); the same place listed twice is one entry
  const entries = candidates.filter(
    (entry, index) =>
      !candidates.some((other, at) => {
        if (at === index) return false;
        const place = entry.realPath ?? entry.path;
        if ((other.realPath ?? other.path) === place) return at < index;
        return contains(other, place) && !reopened(other, place);
      }),
  );
  return {
    entries,
    handedBack,
    holding: (path) => entries.find((entry) => contains(entry, path) && !reopened(entry, path)) ?? null,
  };
};

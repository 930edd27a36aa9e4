import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

import { GITLINK, isGitDirByEntries, kindOfEntry, type ProtectedKind } from './protectedPaths.js';
import { isUnder } from '../core/paths/isUnder.js';

/**
 * .what = the directories inside a git directory that hold only git's own data (objects, refs, logs): never walked
 * .why = nothing in them is trusted as configuration, and `objects` alone may hold thousands of directories
 */
const GIT_DATA_DIRS = new Set(['objects', 'refs', 'logs', 'lfs', 'rr-cache', 'svn']);

/**
 * .what = how far before a call's start a change still counts as the call's, in nanoseconds
 * .why = the kernel stamps a change with a clock that ticks every few milliseconds (a coarse clock), so a change made
 *        right after the call started may carry a stamp up to one tick earlier
 */
const CLOCK_MARGIN_NS = 20_000_000n;

/** .what = the most a copy of one protected entry may hold; a larger one is bound read-only instead of put back */
const MAX_COPY_BYTES = 4 * 1024 * 1024;

/** .what = one file, link or directory inside a protected entry, as it was: enough to put it back */
interface CopiedNode {
  type: 'file' | 'dir' | 'link';
  mode: number;
  ctimeNs: bigint;
  content?: Buffer;
  target?: string;
}

/** .what = a protected entry the tree holds: where, what, its inode, and a copy of what it holds (null when too large) */
interface KnownEntry {
  path: string;
  kind: ProtectedKind;
  inode: string;
  /** bound read-only in the sandbox: at the workspace's top, and the parts of a git directory */
  bound: boolean;
  copy: Map<string, CopiedNode> | null;
}

/** .what = a directory the tree holds: its ctime when last read, when that was, and whether it is a git directory */
interface KnownDir {
  ctimeNs: bigint;
  readAtNs: bigint;
  gitDir: boolean;
}

/** .what = one change the sweep put right, or a repository a command created, as the model and the audit are told */
export interface ProtectedChange {
  /** relative to the workspace */
  path: string;
  trustedBy: string;
  /** removed: created by the command, moved to quarantine; restored: changed or removed by it, put back (the command's
   *  version moved to quarantine); repository: a git repository the command created, with what in it runs code */
  action: 'removed' | 'restored' | 'repository';
  /** where the command's version went (removed and restored), absolute */
  quarantine?: string;
  /** for a repository: what in it runs commands when git runs there (hooks, configuration keys) */
  runs?: string[];
}

/** .what = what a sandbox binds for the protected tree: git directories pinned onto themselves, entries read-only */
export interface ProtectedMounts {
  pinned: string[];
  /** shown: relative to the workspace */
  bound: Array<{ path: string; inode: string; shown: string; trustedBy: string }>;
}

/** .what = whether a path relative to the workspace passes through a directory named .git */
const isUnderDotGit = (shown: string): boolean =>
  shown === '.git' || shown.startsWith('.git/') || shown.includes('/.git/') || shown.endsWith('/.git');

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
const inodeOf = (stats: { dev: bigint | number; ino: bigint | number }) => `${stats.dev}:${stats.ino}`;
const listDir = (dir: string): Dirent[] | null => {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
};

/**
 * .what = the configuration keys that run a command when git runs, by the kind git documents them as, and the hooks:
 *         what a repository a command created holds that runs code
 */
const RUNS_COMMAND_KEY =
  /^\s*(fsmonitor|hookspath|pager|editor|sshcommand|askpass|helper|external|textconv|command|clean|smudge|process|driver|program|gitproxy|uploadpack|receivepack|packobjectshook)\s*=/i;

/** .what = what in a git directory runs code when git runs there: hooks that are not samples, config keys of that kind */
const findRunnable = (gitDir: string): string[] => {
  const hooks = (listDir(join(gitDir, 'hooks')) ?? [])
    .filter((entry) => !entry.name.endsWith('.sample'))
    .map((entry) => `hooks/${entry.name}`);
  let config = '';
  try {
    config = readFileSync(join(gitDir, 'config'), 'utf8').slice(0, 1024 * 1024);
  } catch {
    // no configuration: nothing configured runs
  }
  let section = '';
  const keys: string[] = [];
  for (const line of config.split('\n')) {
    const header = /^\s*\[([^\]]+)\]/.exec(line);
    if (header) section = header[1].replace(/\s+"/, '.').replace(/"$/, '');
    else if (RUNS_COMMAND_KEY.test(line) || (/^alias$/i.test(section) && /=/.test(line)))
      keys.push(`config ${section}.${line.trim().split('=')[0].trim()}`);
  }
  return [...hooks, ...keys];
};

/**
 * .what = a copy of a protected entry (a file, a link, or a directory and all it holds), bounded; null when larger
 *         than MAX_COPY_BYTES or unreadable
 */
const copyEntry = (path: string): Map<string, CopiedNode> | null => {
  const copy = new Map<string, CopiedNode>();
  let bytes = 0;
  const visit = (at: string, shown: string): boolean => {
    const stats = lstatSync(at, { bigint: true, throwIfNoEntry: false });
    if (!stats) return true;
    const mode = Number(stats.mode & 0o7777n);
    if (stats.isSymbolicLink()) copy.set(shown, { type: 'link', mode, ctimeNs: stats.ctimeNs, target: readlinkSync(at) });
    else if (stats.isDirectory()) {
      copy.set(shown, { type: 'dir', mode, ctimeNs: stats.ctimeNs });
      const entries = listDir(at);
      if (!entries) return false;
      for (const entry of entries) if (!visit(join(at, entry.name), join(shown, entry.name))) return false;
    } else if (stats.isFile()) {
      bytes += Number(stats.size);
      if (bytes > MAX_COPY_BYTES) return false;
      copy.set(shown, { type: 'file', mode, ctimeNs: stats.ctimeNs, content: readFileSync(at) });
    } else return false;
    return true;
  };
  try {
    return visit(path, '') ? copy : null;
  } catch {
    return null;
  }
};

/** .what = moves a path into a quarantine folder (one per sweep), keeping its place under the workspace; returns where */
const quarantinePath = (input: { quarantineDir: string; workspace: string; sweep: number }, path: string): string => {
  const to = join(input.quarantineDir, String(input.sweep), relative(input.workspace, path));
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  try {
    renameSync(path, to);
  } catch {
    // another file system: a copy, then the original removed
    cpSync(path, to, { recursive: true, verbatimSymlinks: true });
    rmSync(path, { recursive: true, force: true });
  }
  return to;
};

/** .what = whether a directory is itself (no link on the way) and inside the workspace: the only place a sweep writes */
const isOwnDir = (workspace: string, dir: string): boolean => {
  try {
    return realpathSync(dir) === dir && isUnder(workspace, dir);
  } catch {
    return false;
  }
};

/** .what = puts one node of a copy back at a path (whatever was there is in quarantine, or gone) */
const putBack = (at: string, node: CopiedNode): void => {
  if (node.type === 'dir') mkdirSync(at, { recursive: true });
  else if (node.type === 'link') symlinkSync(node.target!, at);
  else writeFileSync(at, node.content!, { flag: 'wx' });
  if (node.type !== 'link') chmodSync(at, node.mode);
};

const sameNode = (a: CopiedNode | undefined, b: CopiedNode | undefined): boolean =>
  !!a && !!b && a.type === b.type && a.mode === b.mode && a.target === b.target && (a.content?.equals(b.content!) ?? !b.content);

/**
 * .what = makes a copied entry what its copy says again: what the command changed, added or removed in it is put back
 *         as it was, the command's version moved to quarantine; a change made before `sinceNs` (all of it) is someone
 *         else's, and becomes the copy. Returns what was put back, or null when nothing was
 */
const restoreEntry = (
  known: KnownEntry,
  input: { sinceNs: bigint; quarantine: (path: string) => string },
): Omit<ProtectedChange, 'path'> | null => {
  if (!known.copy) return null;
  const copy = known.copy;
  const now = copyEntry(known.path) ?? new Map<string, CopiedNode>();
  const differs = [...new Set([...copy.keys(), ...now.keys()])].filter((shown) => !sameNode(copy.get(shown), now.get(shown)));
  // unchanged, or changed (never removed) before the call began: taken as it is
  if (differs.every((shown) => now.has(shown) && now.get(shown)!.ctimeNs < input.sinceNs)) {
    known.copy = now;
    return null;
  }
  const moved = lstatSync(known.path, { throwIfNoEntry: false }) ? input.quarantine(known.path) : undefined;
  // parents first
  for (const [shown, node] of [...copy].sort(([a], [b]) => a.length - b.length)) putBack(join(known.path, shown), node);
  known.inode = inodeOf(lstatSync(known.path, { bigint: true }));
  known.copy = copyEntry(known.path);
  return { trustedBy: known.kind.trustedBy, action: 'restored', ...(moved ? { quarantine: moved } : {}) };
};

/**
 * .what = the protected entries of a workspace at any depth, watched across a toolbox's bash calls: what exists is known
 *         (and copied, or bound read-only in the sandbox), and after each call `sweep` puts right what the call created
 *         or changed of them, moving the command's version to a quarantine directory
 * .why = a mount can keep a path read-only only where something already is: a model's command can make
 *        `pkg/.bhrain/settings.json`, `vendor/lib/.git/hooks/post-checkout` or `.git/commondir` at any depth, with any
 *        name of a directory on the way, and whoever trusts it next runs it outside any sandbox. The sweep finds them by
 *        kind, not by a list of places: every directory's ctime (which no command can set back) says which directories
 *        changed, and only those are read again
 * .note = what bhrain reads as a project's configuration (PROJECT_CONFIG_PATHS) is all of a kind found here, so no run
 *         reads what an earlier run's model planted. A git repository a command creates (`git init`, a scaffold) is kept,
 *         and what runs code in it is named. Synchronous: nothing else runs in the workspace while it sweeps
 */
export const genProtectedTree = (input: { workspace: string; quarantineDir: string }) => {
  const { workspace } = input;
  const dirs = new Map<string, KnownDir>();
  const entries = new Map<string, KnownEntry>();
  const gitDirs = new Set<string>();

  /** reads one directory: records it, and hands each protected entry and each subdirectory to the callbacks */
  const readDir = (
    dir: string,
    found: { entry: (path: string, kind: ProtectedKind) => void; subdir: (path: string) => void; gitDir: (path: string) => void },
  ): void => {
    const stats = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
    const listed = stats?.isDirectory() ? listDir(dir) : null;
    if (!stats || !listed) return void dirs.delete(dir);
    const names = new Set(listed.map((entry) => entry.name));
    const gitDir = basename(dir) === '.git' || isGitDirByEntries(names);
    dirs.set(dir, { ctimeNs: stats.ctimeNs, readAtNs: nowNs(), gitDir });
    if (gitDir) found.gitDir(dir);
    // as findProtected judges: anywhere under a .git, git's own names are git's parts, as they are in any git directory
    const inGitDir = gitDir || isUnderDotGit(relative(workspace, dir));
    for (const entry of listed) {
      const path = join(dir, entry.name);
      const kind = kindOfEntry({ name: entry.name, atRoot: dir === workspace, inGitDir, isFile: entry.isFile() });
      if (kind) found.entry(path, kind);
      else if (entry.isDirectory() && !(gitDir && GIT_DATA_DIRS.has(entry.name))) found.subdir(path);
    }
  };

  /** .what = walks a directory and all below it, calling back for each protected entry and git directory found */
  const walk = (dir: string, onEntry: (path: string, kind: ProtectedKind) => void, onGitDir: (path: string) => void) => {
    const pending = [dir];
    while (pending.length) readDir(pending.pop()!, { entry: onEntry, subdir: (path) => pending.push(path), gitDir: onGitDir });
  };

  const know = (path: string, kind: ProtectedKind): void => {
    const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (!stats) return;
    const bound = dirname(path) === workspace || dirs.get(dirname(path))?.gitDir === true;
    const copy = copyEntry(path);
    entries.set(path, { path, kind, inode: inodeOf(stats), bound: bound || copy === null, copy });
  };

  walk(workspace, know, (path) => gitDirs.add(path));
  // only a git directory that was there before any call is trusted, and pinned: one a command made may go as it came
  const pinned = [...gitDirs].sort();
  // the repositories a command made (a git directory, or a .git file naming one): theirs to change, named by what runs
  // code in them, each time that changes
  const madeRepositories = new Map<string, { gitDir: string | null; runs: string | null }>();
  let sweeps = 0;

  const quarantine = (path: string): string => quarantinePath({ quarantineDir: input.quarantineDir, workspace, sweep: sweeps }, path);

  return {
    /** .what = what a sandbox binds: every git directory pinned onto itself, the bound entries read-only */
    mounts: (): ProtectedMounts => ({
      pinned,
      bound: [...entries.values()]
        .filter((known) => known.bound)
        .map((known) => ({
          path: known.path,
          inode: known.inode,
          shown: relative(workspace, known.path),
          trustedBy: known.kind.trustedBy,
        })),
    }),

    /**
     * .what = after a call that started at `sinceMs`: every directory whose ctime changed is read again; a protected
     *         entry that is new is the command's (removed to quarantine) unless it changed before the call began (someone
     *         else's: known from now on); every copied entry is put back as it was; a git directory that is new is a
     *         repository the command made, kept and named with what in it runs code
     */
    sweep: (sinceMs: number): ProtectedChange[] => {
      const sinceNs = BigInt(Math.floor(sinceMs)) * 1_000_000n - CLOCK_MARGIN_NS;
      sweeps++;
      const changes: ProtectedChange[] = [];
      const created: Array<{ path: string; kind: ProtectedKind }> = [];
      const newGitDirs: string[] = [];
      const onEntry = (path: string, kind: ProtectedKind) => {
        if (!entries.has(path)) created.push({ path, kind });
      };
      const onGitDir = (path: string) => {
        if (!gitDirs.has(path)) newGitDirs.push(path);
      };
      for (const [dir, known] of [...dirs]) {
        if (!dirs.has(dir)) continue;
        const stats = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
        if (!stats?.isDirectory()) {
          for (const path of [...dirs.keys()]) if (isUnder(dir, path)) dirs.delete(path);
          continue;
        }
        // a directory read in the clock tick it last changed in may change again in that tick, under the same ctime
        if (stats.ctimeNs === known.ctimeNs && known.readAtNs - known.ctimeNs > CLOCK_MARGIN_NS) continue;
        readDir(dir, {
          entry: onEntry,
          subdir: (path) => {
            if (!dirs.has(path)) walk(path, onEntry, onGitDir);
          },
          gitDir: onGitDir,
        });
      }
      for (const path of newGitDirs) {
        gitDirs.add(path);
        madeRepositories.set(path, { gitDir: path, runs: null });
      }
      for (const { path, kind } of created) {
        const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
        if (!stats || !isOwnDir(workspace, dirname(path))) continue;
        if ([...madeRepositories.keys()].some((repository) => isUnder(repository, path))) continue;
        if (stats.ctimeNs < sinceNs) {
          know(path, kind);
          continue;
        }
        if (kind === GITLINK && stats.isFile()) {
          const target = /^gitdir:\s*(.+)$/m.exec(readFileSync(path, 'utf8'))?.[1]?.trim();
          const gitDir = target ? resolve(dirname(path), target) : null;
          madeRepositories.set(path, { gitDir: gitDir && isUnder(workspace, gitDir) ? gitDir : null, runs: null });
          continue;
        }
        changes.push({ path: relative(workspace, path), trustedBy: kind.trustedBy, action: 'removed', quarantine: quarantine(path) });
      }
      for (const [path, made] of madeRepositories) {
        if (!lstatSync(path, { throwIfNoEntry: false })) {
          madeRepositories.delete(path);
          continue;
        }
        // named when made, and again whenever what runs code in it changes
        const runs = made.gitDir ? findRunnable(made.gitDir) : [];
        if (runs.join('\n') === made.runs) continue;
        made.runs = runs.join('\n');
        changes.push({ path: relative(workspace, path), trustedBy: 'git', action: 'repository', runs });
      }
      for (const known of [...entries.values()]) {
        // an entry whose directory is gone went with it (deleting a directory is in plain view, and plants nothing)
        if (!isOwnDir(workspace, dirname(known.path))) entries.delete(known.path);
        else {
          const restored = restoreEntry(known, { sinceNs, quarantine });
          if (restored) changes.push({ path: relative(workspace, known.path), ...restored });
        }
      }
      return changes;
    },
  };
};

/** .what = a fresh quarantine directory for one toolbox's sweeps, under bhrain's home (hidden from the model) */
export const genQuarantineDir = (bhrainHome: string): string =>
  join(bhrainHome, 'quarantine', `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`);

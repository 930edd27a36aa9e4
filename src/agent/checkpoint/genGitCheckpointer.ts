import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync, type Dirent } from 'node:fs';
import { copyFile, lstat, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { BadRequestError } from '../../core/contract/errors.js';
import { runHardenedGit } from '../git/runHardenedGit.js';
import type { BhrainCheckpoint, BhrainCheckpointer } from './BhrainCheckpointer.js';
import {
  CHECKPOINT_REF_PREFIX,
  CheckpointStoreError,
  GIT_EMPTY_TREE,
  initCheckpointStore,
  locateCheckpointStore,
  runStoreGit,
  writeCheckpointCommit,
  type CheckpointStore,
} from './checkpointStore.js';

/** .what = how many paths of each kind a checkpoint lists; past it, the rest are counted in `omitted` */
export const CHECKPOINT_MAX_LISTED = 1_000;

/** .what = the rule old checkpoints are removed by: older than keepDays and not among a store's keepNewest newest runs */
export interface CheckpointRetention {
  keepNewest: number;
  keepDays: number;
}

/** a walk stops after this long (glob's budget) */
const WALK_MAX_MS = 10_000;

const DAY_MS = 86_400_000;

/** .what = what a git checkpointer was given: where, for which run, what to keep */
export interface GitCheckpointerInput {
  /** the working directory: its repository's root (or itself, outside one) is what is recorded */
  cwd: string;
  /** bhrain's home (getBhrainHome): the store is under its checkpoints/ */
  home: string;
  /** names the run's checkpoints in the store (refs/bhrain/runs/<runId>) */
  runId: string;
  /** ignored files up to this size are recorded too; 0 = no ignored file */
  ignoredMaxBytes: number;
  retention: CheckpointRetention;
  /** outside any repository, a tree of more entries is not recorded; CHECKPOINT_MAX_ENTRIES_OUTSIDE_GIT when absent */
  maxEntriesOutsideGit?: number;
}

/** .what = a git checkpointer: the checkpointer, what it recorded, and why it stopped recording (null: it did not) */
export interface GitCheckpointer extends BhrainCheckpointer {
  store: CheckpointStore;
  checkpoints: () => readonly BhrainCheckpoint[];
  failure: () => string | null;
}

/**
 * .what = the store's index seeded from the repository's own: a copy of `.git/index`, kept only when every entry is a
 *         plain one (no assume-unchanged, no skip-worktree bit), no attribute or config can have converted what it
 *         holds, and the repository's objects are readable from the store (alternates)
 * .why = git's stat cache: a tracked file whose stat matches is not read again, so the first checkpoint of a big
 *        repository hashes only what differs from its index. A blob the index names by a converted form (a filter, an
 *        eol) would restore other bytes than the file's: then nothing is seeded and every file is hashed once
 */
const seedIndex = async (store: CheckpointStore, context: { env: Record<string, string | undefined> }): Promise<boolean> => {
  const repo = store.repo;
  if (!repo || !existsSync(join(repo.gitDir, 'index')) || existsSync(join(repo.commonDir, 'info', 'attributes'))) return false;
  const converting = await runHardenedGit(
    {
      cwd: store.root,
      args: ['config', '--get-regexp', '^core\\.(autocrlf|eol|attributesfile)$'],
      timeoutMs: 10_000,
      maxStdoutBytes: 4096,
    },
    context,
  );
  if (!converting.ran || converting.end.exitCode !== 1) return false;
  await copyFile(join(repo.gitDir, 'index'), store.git.indexFile);
  await writeFile(join(store.gitDir, 'objects', 'info', 'alternates'), `${join(repo.commonDir, 'objects')}\n`, { mode: 0o600 });
  const listed = await runStoreGit(store, ['ls-files', '-z', '-v', '--cached'], context).catch(() => null);
  const plain =
    listed !== null &&
    listed
      .split('\0')
      .filter(Boolean)
      .every((entry) => entry.startsWith('H ') && !/(^|\/)\.gitattributes$/.test(entry.slice(2)));
  if (!plain) await rm(store.git.indexFile, { force: true });
  return plain;
};

/** .what = the ignored files up to maxBytes, added by force: what `git add -A` leaves out by default */
const addIgnored = async (store: CheckpointStore, maxBytes: number, context: { env: Record<string, string | undefined> }) => {
  const listed = await runStoreGit(store, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard'], context);
  const small: string[] = [];
  for (const path of listed.split('\0').filter(Boolean)) {
    const stat = await lstat(join(store.root, path)).catch(() => null);
    if (stat && (stat.isSymbolicLink() || (stat.isFile() && stat.size <= maxBytes))) small.push(path);
  }
  if (small.length)
    await runStoreGit(store, ['add', '--force', '--ignore-errors', '--pathspec-from-file=-', '--pathspec-file-nul'], context, {
      stdin: `${small.join('\0')}\0`,
    });
};

/** how long a checkpoint waits for another run's checkpoint of the same store, and when a lock is taken as left behind */
const STORE_LOCK_WAIT_MS = 30_000;
const STORE_LOCK_STALE_MS = 120_000;

/**
 * .what = runs `fn` holding the store's lock (a directory made atomically), waiting while another run's checkpoint of
 *         the same work tree holds it; a lock older than STORE_LOCK_STALE_MS (its run was killed) is taken over
 * .why = two runs in one repository share the store and its index: git's own index.lock would fail one of them, and a
 *        prune must never find another run's new objects before its ref names them
 */
const withStoreLock = async <T>(store: CheckpointStore, fn: () => Promise<T>): Promise<T> => {
  const lock = join(store.gitDir, 'bhrain-checkpoint.lock');
  // synchronous: a directory made or found, on the path of a run's first change (a promise is a trip through the thread pool)
  const take = () => {
    try {
      mkdirSync(lock);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return false;
    }
  };
  for (const deadline = Date.now() + STORE_LOCK_WAIT_MS; !take();) {
    const since = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (since > STORE_LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
    else if (Date.now() > deadline)
      throw new CheckpointStoreError(`another run's checkpoint of ${store.root} held ${lock} for ${STORE_LOCK_WAIT_MS / 1000} s`);
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
};

/** .what = the paths two checkpoints differ by, as created, changed and deleted, each list bounded */
const diffCheckpoints = async (
  store: CheckpointStore,
  from: string,
  to: string,
  context: { env: Record<string, string | undefined> },
): Promise<NonNullable<BhrainCheckpoint['files']>> => {
  const listed = (await runStoreGit(store, ['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to], context)).split('\0');
  const files = { created: [] as string[], changed: [] as string[], deleted: [] as string[], omitted: 0 };
  for (let at = 0; at + 1 < listed.length; at += 2) {
    const list = listed[at] === 'A' ? files.created : listed[at] === 'D' ? files.deleted : files.changed;
    if (list.length < CHECKPOINT_MAX_LISTED) list.push(listed[at + 1]);
    else files.omitted++;
  }
  return files;
};

/**
 * .what = removes the refs of a store's old runs (older than keepDays and not among the keepNewest newest), then the
 *         objects no ref reaches any more
 * .why = the store must stay bounded as the run records are (RUN_RETENTION), without a command to remember
 */
export const pruneCheckpointStore = async (
  store: CheckpointStore,
  retention: CheckpointRetention,
  context: { env: Record<string, string | undefined>; now?: () => Date },
): Promise<string[]> => {
  // refs are written loose and never packed (no gc): no more than keepNewest of them, and no git needs to run
  const loose = await readdir(join(store.gitDir, CHECKPOINT_REF_PREFIX)).catch(() => [] as string[]);
  if (loose.length <= retention.keepNewest && !existsSync(join(store.gitDir, 'packed-refs'))) return [];
  const listed = await runStoreGit(
    store,
    // newest first: by commit time, then (the same second) by run id, which the CLI's make sort by time too
    ['for-each-ref', '--sort=-refname', '--sort=-committerdate', '--format=%(refname) %(committerdate:unix)', CHECKPOINT_REF_PREFIX],
    context,
  );
  const cutoffMs = (context.now?.() ?? new Date()).getTime() - retention.keepDays * DAY_MS;
  const old = listed
    .split('\n')
    .filter(Boolean)
    .slice(retention.keepNewest)
    .map((line) => line.split(' '))
    .filter(([, seconds]) => Number(seconds) * 1000 < cutoffMs)
    .map(([ref]) => ref);
  if (!old.length) return [];
  await runStoreGit(store, ['update-ref', '--stdin'], context, { stdin: old.map((ref) => `delete ${ref}\n`).join('') });
  await runStoreGit(store, ['prune', '--expire=now'], context);
  return old.map((ref) => ref.slice(CHECKPOINT_REF_PREFIX.length));
};

/**
 * .what = how long a store no run has opened is kept: then it is removed whole, by the next run that opens any store
 * .why = a store's runs are pruned when a run opens it (pruneCheckpointStore); a tree no longer worked in would keep its
 *        store for ever. Past the run records' keepDays, so a store goes only well after the records that name it
 */
export const CHECKPOINT_STORE_IDLE_DAYS = 30;

/** .what = removes the other stores under the same home that no run has opened for CHECKPOINT_STORE_IDLE_DAYS */
export const pruneIdleCheckpointStores = async (store: CheckpointStore, context: { now?: () => Date } = {}): Promise<string[]> => {
  const home = dirname(store.gitDir);
  const cutoffMs = (context.now?.() ?? new Date()).getTime() - CHECKPOINT_STORE_IDLE_DAYS * DAY_MS;
  const removed: string[] = [];
  for (const name of await readdir(home).catch(() => [] as string[])) {
    const other = join(home, name);
    if (other === store.gitDir || !/^[0-9a-f]{32}$/.test(name)) continue;
    const used = await stat(join(other, 'last-used')).catch(() => null);
    if (used && used.mtimeMs < cutoffMs) {
      await rm(other, { recursive: true, force: true });
      removed.push(other);
    }
  }
  return removed;
};

/**
 * .what = walks the files and links under a directory (.git not entered, links not followed), one at a time, and returns
 *         why it stopped early: more than maxEntries entries, or past the deadline (null: it listed them all)
 * .why = the checkpointer's own bounded readdir, synchronous so that a small tree is signed between two turns without a
 *        trip through the thread pool per directory (an async caller pauses between directories); fdir (glob's walk)
 *        would load it and picomatch into every run that calls bash
 */
function* walkTree(
  root: string,
  bounds: { maxEntries: number; deadline: number },
): Generator<string | null, { reason: 'entries' | 'time'; entries: number } | null> {
  const pending = [root];
  let entries = 0;
  while (pending.length) {
    const dir = pending.pop()!;
    let listed: Dirent[] = [];
    try {
      listed = readdirSync(dir, { withFileTypes: true });
    } catch {
      // a directory gone or unreadable is left out, as git add leaves it
    }
    for (const entry of listed) {
      if (++entries > bounds.maxEntries) return { reason: 'entries', entries: bounds.maxEntries };
      if ((entries & 255) === 0 && Date.now() > bounds.deadline) return { reason: 'time', entries };
      const path = join(dir, entry.name);
      if (!entry.isDirectory()) yield path;
      else if (entry.name !== '.git') pending.push(path);
    }
    // a directory read: where an async caller may let the event loop run
    yield null;
  }
  return null;
}

/** a directory outside any repository is checkpointed whole, so only up to this many entries (a walk of glob's budget) */
export const CHECKPOINT_MAX_ENTRIES_OUTSIDE_GIT = 200_000;

/**
 * .what = refuses (throws, so checkpoints stop for the run with a warning) a directory outside any repository that holds
 *         more than CHECKPOINT_MAX_ENTRIES_OUTSIDE_GIT entries, or whose walk takes longer than glob's
 * .why = no .gitignore and no index bound such a tree: an act run started in a home directory would copy all of it into
 *        bhrain's home before its first change
 */
const refuseHugeTree = async (root: string, maxEntries: number): Promise<void> => {
  const walk = walkTree(root, { maxEntries, deadline: Date.now() + WALK_MAX_MS });
  let step = walk.next();
  for (let dirs = 0; !step.done; step = walk.next())
    if (step.value === null && ++dirs % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  const stop = step.value;
  if (stop)
    throw new Error(
      `${root} is in no git repository and ${stop.reason === 'time' ? `takes more than ${WALK_MAX_MS / 1000} s to list` : `holds more than ${stop.entries.toLocaleString('en-US')} entries`}: it would be copied whole into bhrain's home, so this run takes no checkpoints and cannot be rewound. Run in a git repository (its ignore rules and index bound a checkpoint), or in a smaller directory`,
    );
};

/** a work tree of at most this many files (ignored ones and node_modules included) is compared in-process between turns */
const SIGNED_TREE_MAX_ENTRIES = 2_000;

/**
 * .what = a signature of every file and link under the work tree (.git aside): each path with its inode, size, mode,
 *         mtime and ctime in nanoseconds; null when the tree holds more than SIGNED_TREE_MAX_ENTRIES, or when a file changed
 *         so recently that a change in the same tick could hide from its times; '' when it holds no file
 * .why = a turn that changed nothing must cost nothing: `git add` is a process (~5 ms, and a fork of this one) where an
 *        lstat of a small tree is well under a millisecond. A bigger tree is left to git's own stat cache, whose cost is
 *        a share of a real model's turn (docs/benchmarks.md)
 */
const signTree = (root: string): string | null => {
  const files: string[] = [];
  const walk = walkTree(root, { maxEntries: SIGNED_TREE_MAX_ENTRIES, deadline: Date.now() + WALK_MAX_MS });
  let step = walk.next();
  for (; !step.done; step = walk.next()) if (step.value !== null) files.push(step.value);
  if (step.value) return null;
  const racyAfterNs = BigInt(Date.now() - 50) * 1_000_000n;
  const parts: string[] = [];
  for (const path of files.sort()) {
    const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (!stats || stats.mtimeNs > racyAfterNs || stats.ctimeNs > racyAfterNs) return null;
    parts.push(`${path}\0${stats.ino}\0${stats.size}\0${stats.mode}\0${stats.mtimeNs}\0${stats.ctimeNs}`);
  }
  return parts.join('\n');
};

/**
 * .what = a checkpointer over a shadow git store in bhrain's home (checkpointStore): `git add -A` into the store's own
 *         index (git's stat cache: only files whose stat changed are read), `write-tree`, and a commit when the tree
 *         differs from the last one, kept by the run's ref; the first checkpoint is taken before the first call that may
 *         change files, so a run that changes nothing costs nothing
 * .why = changes made through bash are recorded as those of write and edit are, tracked or untracked, in a dirty tree;
 *        git runs hardened (runHardenedGit) on a store of bhrain's, so nothing in the workspace runs nor is written
 */
export const genGitCheckpointer = (
  input: GitCheckpointerInput,
  context: { env: Record<string, string | undefined>; now?: () => Date },
): GitCheckpointer => {
  // the ref is written in-process at refs/bhrain/runs/<runId>: a run id that is no plain ref name could write elsewhere
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(input.runId) || input.runId.includes('..') || input.runId.endsWith('.lock'))
    throw new BadRequestError(`the run id '${input.runId}' cannot name a checkpoint ref: use letters, digits, '.', '_' and '-'`);
  const store = locateCheckpointStore({ cwd: input.cwd, home: input.home });
  const checkpoints: BhrainCheckpoint[] = [];
  let failure: string | null = null;
  let last: { commit: string; tree: string } | null = null;
  // the work tree held no file before the first change: that checkpoint (git's empty tree) is written with the next one
  let emptyBefore: { turn: number; at: Date } | null = null;
  // the work tree as of the last checkpoint, when small enough to compare in-process (signTree)
  let signed: string | null = null;
  let started: Promise<void> | null = null;
  let opened: Promise<void> | null = null;
  let pruned = false;
  // the last checkpoint's tree, commit and ref, written while the calls run (the next checkpoint awaits it)
  let recording: Promise<void> = Promise.resolve();
  const now = () => context.now?.() ?? new Date();
  const git = (args: readonly string[], options?: Parameters<typeof runStoreGit>[3]) => runStoreGit(store, args, context, options);

  /** .what = the store made (its index seeded) or found, and the user's own excludes copied in */
  const open = async () => {
    if (!store.repo) await refuseHugeTree(store.root, input.maxEntriesOutsideGit ?? CHECKPOINT_MAX_ENTRIES_OUTSIDE_GIT);
    mkdirSync(store.gitDir, { recursive: true, mode: 0o700 });
    await withStoreLock(store, async () => {
      if (!existsSync(join(store.gitDir, 'HEAD'))) initCheckpointStore(store);
      if (!existsSync(store.git.indexFile)) await seedIndex(store, context);
      // the repository's info/exclude is the user's too: ignored there, ignored here
      const exclude = store.repo ? await readFile(join(store.repo.commonDir, 'info', 'exclude')).catch(() => Buffer.alloc(0)) : '';
      writeFileSync(join(store.gitDir, 'info', 'exclude'), exclude, { mode: 0o600 });
      writeFileSync(join(store.gitDir, 'last-used'), '', { mode: 0o600 });
    });
  };

  /** .what = a commit of the tree, kept by the run's ref, when it differs from the last */
  const commitTree = async (tree: string, turn: number, at: Date) => {
    if (last && tree === last.tree) return;
    const commit = writeCheckpointCommit(store, {
      tree,
      parent: last?.commit ?? null,
      message: `bhrain ${input.runId} turn ${turn}`,
      at,
      ref: `${CHECKPOINT_REF_PREFIX}${input.runId}`,
    });
    const files = last ? await diffCheckpoints(store, last.commit, commit, context) : null;
    checkpoints.push({ turn, hash: commit, files, takenAt: at.toISOString() });
    last = { commit, tree };
  };

  /**
   * .what = one checkpoint of the work tree as it is now, unless it is the same as the last: `staged` once git has read
   *         the files into the store's index, `recorded` once the tree, the commit and the ref are written (and, after
   *         the run's first, old runs pruned)
   * .why = only git's read of the files must come before a change: the rest is written while the calls run. A work tree
   *        without a file (a directory a project is about to be made in) is git's empty tree: no git reads it, and
   *        nothing is written until a turn makes a file, so a run that never does costs nothing
   */
  const take = (turn: number): { staged: Promise<void>; recorded: Promise<void> } => {
    const signature = signTree(store.root);
    const done = { staged: Promise.resolve(), recorded: Promise.resolve() };
    if (signature !== null && signature === signed) return done;
    if (signature === '' && last === null && emptyBefore === null) {
      emptyBefore = { turn, at: now() };
      signed = signature;
      return done;
    }
    let staged = () => {};
    const isStaged = new Promise<void>((resolve) => (staged = resolve));
    const prune = !pruned;
    pruned = true;
    // under the lock to the ref: another run's prune never finds this checkpoint's objects unreferenced
    const recorded = (opened ??= open())
      .then(() =>
        withStoreLock(store, async () => {
          if (emptyBefore) await commitTree(GIT_EMPTY_TREE, emptyBefore.turn, emptyBefore.at);
          emptyBefore = null;
          let tree = GIT_EMPTY_TREE;
          if (signature !== '') {
            const addAll = () => git(['add', '--all', '--ignore-errors', '--', '.'], { okExitCodes: [0, 1] });
            // a file removed while git lists the tree (by someone else while the model answers, or a process a call left)
            // fails the add: once more, on the tree as it is then; a second failure is the checkpoint's
            await addAll().catch(addAll);
            if (input.ignoredMaxBytes > 0) await addIgnored(store, input.ignoredMaxBytes, context);
            staged();
            // the calls start before the next git does: its spawn is synchronous
            await new Promise((resolve) => setImmediate(resolve));
            tree = (await git(['write-tree'])).trim();
          } else staged();
          await commitTree(tree, turn, now());
          if (prune) await pruneCheckpointStore(store, input.retention, context);
        }),
      )
      .then(async () => {
        signed = signature;
        if (prune) await pruneIdleCheckpointStores(store, context);
      });
    const stagedOrFailed = Promise.race([isStaged, recorded]);
    // only the first checkpoint waits for its files to be read; a later one's failure is afterTurn's, through `recorded`
    stagedOrFailed.catch(() => undefined);
    return { staged: stagedOrFailed, recorded };
  };

  /** .what = a failure recorded once and said once (thrown to the session, which warns): later calls do nothing */
  const fail = (error: unknown): never => {
    failure = (error as Error)?.message ?? String(error);
    throw error;
  };

  return {
    store,
    checkpoints: () => checkpoints,
    failure: () => failure,
    beforeChange: async () => {
      if (failure !== null || started) return started ?? undefined;
      started = (async () => {
        const first = take(0);
        recording = first.recorded;
        // awaited by afterTurn, which says its failure
        recording.catch(() => undefined);
        await first.staged;
      })().catch(fail);
      return started;
    },
    afterTurn: async ({ turn }) => {
      if (failure !== null || !started) return;
      await started.catch(() => undefined);
      if (failure === null) await recording.then(() => take(turn).recorded).catch(fail);
    },
  };
};

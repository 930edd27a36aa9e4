import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { BhrainError } from '../../core/contract/errors.js';
import { findGitDirs } from '../git/readGitCredentials.js';
import { runHardenedGit, type HardenedGitStore } from '../git/runHardenedGit.js';

/** .what = the store's directory under bhrain's home: one store per work tree */
export const CHECKPOINTS_DIR = 'checkpoints';

/** .what = the ref namespace that keeps each run's checkpoints: refs/bhrain/runs/<run id> names its last checkpoint */
export const CHECKPOINT_REF_PREFIX = 'refs/bhrain/runs/';

/**
 * .what = the settings of the store's own git, after the hardened ones: an identity for its commits, no automatic gc,
 *         no line-ending conversion, modes and symlinks recorded as they are
 * .why = a checkpoint holds the bytes on disk; the user's config must not change what is stored nor need an identity
 */
const STORE_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['user.name', 'bhrain'],
  ['user.email', 'bhrain@localhost'],
  ['user.useConfigOnly', 'false'],
  ['gc.auto', '0'],
  ['core.autocrlf', 'false'],
  ['core.fileMode', 'true'],
  ['core.symlinks', 'true'],
  ['core.bare', 'false'],
  ['core.logAllRefUpdates', 'false'],
  ['advice.addEmbeddedRepo', 'false'],
];

/** .what = the attributes that outrank a work tree's .gitattributes: no filter, no conversion, the bytes as they are */
const STORE_ATTRIBUTES = '* -text -filter -ident -working-tree-encoding\n';

/** .what = the checkpoint store failed (git missing or refused, a write failed) or holds what does not hash to its name */
export class CheckpointStoreError extends BhrainError {
  readonly code = 'CHECKPOINT_STORE';
}

/**
 * .what = where a work tree's checkpoints are kept: $BHRAIN_HOME/checkpoints/<sha256 of the work tree's real path>/, a
 *         bare git store whose index and objects are bhrain's; the work tree is the repository's root around cwd (its
 *         index can seed the store's), or cwd itself outside a repository
 * .why = never inside `.git` nor the checkout (git status shows nothing bhrain made), and one store per tree, so its index
 *        (git's stat cache) carries over from run to run
 */
export interface CheckpointStore {
  /** the work tree's real path: what checkpoints hold, relative to it */
  root: string;
  gitDir: string;
  /** the repository around cwd, when there is one: its git dir (its index seeds the store's) and its objects */
  repo: { gitDir: string; commonDir: string } | null;
  git: HardenedGitStore;
}

/** .what = the store for a working directory, by the work tree's real path */
export const locateCheckpointStore = (input: { cwd: string; home: string }): CheckpointStore => {
  const cwd = realpathSync.native(resolve(input.cwd));
  const dirs = findGitDirs(cwd);
  const root = dirs ? realpathSync.native(dirs.root) : cwd;
  const gitDir = join(input.home, CHECKPOINTS_DIR, createHash('sha256').update(root).digest('hex').slice(0, 32));
  return {
    root,
    gitDir,
    repo: dirs ? { gitDir: dirs.gitDir, commonDir: dirs.commonDir } : null,
    git: { gitDir, indexFile: join(gitDir, 'index'), workTree: root, config: STORE_CONFIG },
  };
};

/** .what = one git command on the store, hardened; its stdout, or a CheckpointStoreError saying what failed */
export const runStoreGit = async (
  store: CheckpointStore,
  args: readonly string[],
  context: { env: Record<string, string | undefined> },
  options: { stdin?: string | Buffer; maxStdoutBytes?: number; okExitCodes?: readonly number[] } = {},
): Promise<string> => {
  const run = await runHardenedGit(
    {
      cwd: store.root,
      args,
      timeoutMs: 120_000,
      maxStdoutBytes: options.maxStdoutBytes ?? 64 * 1024 * 1024,
      store: store.git,
      stdin: options.stdin,
    },
    context,
  );
  if (!run.ran) throw new CheckpointStoreError(`the checkpoint store's git was not run: ${run.why}`);
  const { end } = run;
  if (end.exitCode === null || !(options.okExitCodes ?? [0]).includes(end.exitCode))
    throw new CheckpointStoreError(
      `git ${args[0]} on the checkpoint store ${store.gitDir} failed (${end.spawnError ?? (end.timedOut ? 'timed out' : `exit ${end.exitCode ?? end.exitSignal}`)}): ${(end.stderr.head + end.stderr.tail).trim()}`,
    );
  if (end.stdout.droppedBytes > 0)
    throw new CheckpointStoreError(`git ${args[0]} on the checkpoint store ${store.gitDir} printed more than bhrain reads`);
  return end.stdout.head + end.stdout.tail;
};

/**
 * .what = makes the store when it is not there yet: a bare repository (0700) with its attributes, and a note of the
 *         work tree it is for
 */
export const initCheckpointStore = async (store: CheckpointStore, context: { env: Record<string, string | undefined> }) => {
  await mkdir(store.gitDir, { recursive: true, mode: 0o700 });
  // --template=: no sample hooks copied from the user's template dir
  await runStoreGit(store, ['init', '--quiet', '--template='], context);
  await mkdir(join(store.gitDir, 'info'), { recursive: true, mode: 0o700 });
  await writeFile(join(store.gitDir, 'info', 'attributes'), STORE_ATTRIBUTES, { mode: 0o600 });
  await writeFile(join(store.gitDir, 'worktree-path'), `${store.root}\n`, { mode: 0o600 });
};

/**
 * .what = the store a run record names, checked to be a checkpoint store of that work tree (its worktree-path note)
 * .why = rewind restores from the store the run wrote, wherever the command is typed; a store of another tree, or none,
 *        is an error saying so, never a restore from the wrong history
 */
export const openCheckpointStoreAt = async (input: { root: string; gitDir: string }): Promise<CheckpointStore> => {
  const noted = await readFile(join(input.gitDir, 'worktree-path'), 'utf8').catch(() => null);
  if (noted === null)
    throw new CheckpointStoreError(
      `the checkpoint store ${input.gitDir} is gone (pruned, or BHRAIN_HOME differs from the run's): nothing can be restored from it`,
    );
  if (noted.trim() !== input.root)
    throw new CheckpointStoreError(
      `the checkpoint store ${input.gitDir} is for ${noted.trim()}, not ${input.root}: it cannot restore this run`,
    );
  return {
    root: input.root,
    gitDir: input.gitDir,
    repo: null,
    git: { gitDir: input.gitDir, indexFile: join(input.gitDir, 'index'), workTree: input.root, config: STORE_CONFIG },
  };
};

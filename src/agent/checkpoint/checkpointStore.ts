import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { deflateSync } from 'node:zlib';

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
 * .what = makes the store when it is not there yet: a repository's layout (gitrepository-layout: objects, refs, a config
 *         of format 0, HEAD last, which makes it one), 0700, with its attributes and a note of the work tree it is for
 * .why = written in-process (synchronously: a few small files) rather than by `git init`, a process on the path of a
 *        run's first change (~10 ms); no sample hook is copied from a template dir, and the store's settings are given to each git command (STORE_CONFIG)
 */
export const initCheckpointStore = (store: CheckpointStore): void => {
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info'])
    mkdirSync(join(store.gitDir, dir), { recursive: true, mode: 0o700 });
  writeFileSync(join(store.gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n', { mode: 0o600 });
  writeFileSync(join(store.gitDir, 'info', 'attributes'), STORE_ATTRIBUTES, { mode: 0o600 });
  writeFileSync(join(store.gitDir, 'worktree-path'), `${store.root}\n`, { mode: 0o600 });
  writeFileSync(join(store.gitDir, 'HEAD'), 'ref: refs/heads/main\n', { mode: 0o600 });
};

/** .what = the git id of an object: the sha1 of its header and content */
export const gitObjectId = (type: string, content: Buffer): string =>
  createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');

/** .what = a file of the store written whole or not at all: to a name of its own, then renamed over the path */
const writeStoreFile = (path: string, content: string | Buffer, mode: number) => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, content, { mode });
  renameSync(temp, path);
};

/** .what = the id of git's empty tree: a work tree without a file */
export const GIT_EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** .what = an object written into the store as a loose object (gitformat-objects: a zlib stream of "<type> <size>\0" and
 *         the content, named by its id), unless it is there */
const writeStoreObject = (store: CheckpointStore, type: string, content: Buffer): string => {
  const id = gitObjectId(type, content);
  const path = join(store.gitDir, 'objects', id.slice(0, 2), id.slice(2));
  if (!existsSync(path)) writeStoreFile(path, deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])), 0o444);
  return id;
};

/**
 * .what = a checkpoint's commit (of a tree, after its parent) written into the store, and the run's ref set to it: the
 *         bytes `git commit-tree` and `git update-ref` write (a loose ref holds the id and a newline); git's empty tree
 *         is written too, which git knows without its object but `fsck` and other gits may not
 * .why = two processes (~10 ms) less per checkpoint; git reads them back (prune, cat-file), and every read verifies an
 *        object by its id (readCheckpointObjects). The caller holds the store's lock, so no other run writes the ref
 */
export const writeCheckpointCommit = (
  store: CheckpointStore,
  input: { tree: string; parent: string | null; message: string; at: Date; ref: string },
): string => {
  if (input.tree === GIT_EMPTY_TREE) writeStoreObject(store, 'tree', Buffer.alloc(0));
  const signature = `bhrain <bhrain@localhost> ${Math.floor(input.at.getTime() / 1000)} +0000`;
  const parent = input.parent ? `parent ${input.parent}\n` : '';
  const id = writeStoreObject(
    store,
    'commit',
    Buffer.from(`tree ${input.tree}\n${parent}author ${signature}\ncommitter ${signature}\n\n${input.message}\n`),
  );
  writeStoreFile(join(store.gitDir, input.ref), `${id}\n`, 0o600);
  return id;
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

import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, readlink, rename, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { BadRequestError } from '../../core/contract/errors.js';
import { gitObjectId, type CheckpointStore } from './checkpointStore.js';
import { diffCheckpointTrees, readCheckpointObjects, readCheckpointTreeId, type CheckpointEntry } from './readCheckpointObjects.js';

/** .what = what a rewind does to one path: restore it (write it as it was), or remove it (the run created it) */
export interface RewindStep {
  path: string;
  action: 'restore' | 'remove';
  /** what the path holds in the state restored: a file, an executable, a symlink; null when removed */
  kind: 'file' | 'executable' | 'symlink' | null;
  /** the content's object id in the store (read verified from the target's tree); null when removed */
  blob: string | null;
}

/** .what = a path that is no longer as the run left it: someone changed it after the run's last checkpoint */
export interface RewindConflict {
  path: string;
  /** what it should be (the last checkpoint's) and what it is */
  expected: string;
  found: string;
}

/** .what = a rewind's plan: the steps, the paths changed since the run, and what it leaves alone (nested repositories) */
export interface RewindPlan {
  steps: RewindStep[];
  conflicts: RewindConflict[];
  skipped: string[];
}

/** .what = a checkpoint entry as a person reads it */
const describeEntry = (entry: CheckpointEntry | null): string =>
  entry === null ? 'absent' : entry.mode === '120000' ? 'a symlink' : entry.mode === '100755' ? 'an executable file' : 'a file';

/** .what = what is at a path now, as a checkpoint entry would record it (null: absent, or a directory) */
const readWorkTreeEntry = async (path: string): Promise<CheckpointEntry | null> => {
  const stat = await lstat(path).catch(() => null);
  if (!stat || stat.isDirectory()) return null;
  if (stat.isSymbolicLink()) return { mode: '120000', id: gitObjectId('blob', Buffer.from(await readlink(path), 'utf8')) };
  if (!stat.isFile()) return { mode: 'other', id: '' };
  return { mode: stat.mode & 0o100 ? '100755' : '100644', id: gitObjectId('blob', await readFile(path)) };
};

const sameEntry = (a: CheckpointEntry | null, b: CheckpointEntry | null): boolean => a?.mode === b?.mode && a?.id === b?.id;

/**
 * .what = the plan to take a work tree from checkpoint `last` (as the run left it) back to checkpoint `target`: each
 *         path that differs between them restored or removed, and each such path that is not as `last` recorded it
 *         (changed since by someone else) a conflict; a nested repository (a gitlink) is left alone and named
 * .why = nothing is written before every path is known to be the run's to put back
 */
export const planRewind = async (
  store: CheckpointStore,
  input: { target: string; last: string },
  context: { env: Record<string, string | undefined> },
): Promise<RewindPlan> => {
  const [targetTree, lastTree] = await Promise.all([
    readCheckpointTreeId(store, input.target, context),
    readCheckpointTreeId(store, input.last, context),
  ]);
  const changed = await diffCheckpointTrees(store, lastTree, targetTree, context);
  const plan: RewindPlan = { steps: [], conflicts: [], skipped: [] };
  for (const [path, { from: now, to: then }] of [...changed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (now?.mode === '160000' || then?.mode === '160000') {
      plan.skipped.push(path);
      continue;
    }
    const found = await readWorkTreeEntry(join(store.root, path));
    if (!sameEntry(found, now))
      plan.conflicts.push({ path, expected: describeEntry(now), found: found?.mode === now?.mode ? 'changed' : describeEntry(found) });
    plan.steps.push({
      path,
      action: then ? 'restore' : 'remove',
      kind: then === null ? null : then.mode === '120000' ? 'symlink' : then.mode === '100755' ? 'executable' : 'file',
      blob: then?.id ?? null,
    });
  }
  return plan;
};

/** .what = removes a path that is not a directory; absent already is fine */
const removeFile = async (path: string) => {
  const stat = await lstat(path).catch(() => null);
  if (stat && !stat.isDirectory()) await rm(path, { force: true });
};

/**
 * .what = removes the directories left empty above the removed paths, deepest first, up to (not including) the root,
 *         except those the restored state has files in
 */
const removeEmptiedDirs = async (root: string, removed: readonly string[], kept: ReadonlySet<string>) => {
  const dirs = new Set<string>();
  for (const path of removed) for (let dir = dirname(path); dir !== '.' && !kept.has(dir); dir = dirname(dir)) dirs.add(dir);
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) await rmdir(join(root, dir)).catch(() => undefined);
};

/** .what = writes one restored path: a symlink made anew, a file through a temp file renamed over it, its mode bits set */
const writeEntry = async (root: string, step: RewindStep, content: Buffer) => {
  const path = join(root, step.path);
  await mkdir(dirname(path), { recursive: true });
  // a directory the run made where a file was: emptied by the removals, gone now
  const stat = await lstat(path).catch(() => null);
  if (stat?.isDirectory()) await rmdir(path);
  if (step.kind === 'symlink') {
    await rm(path, { force: true });
    await symlink(content.toString('utf8'), path);
    return;
  }
  const executable = step.kind === 'executable';
  // a file kept as it was (same exec bit) keeps its own mode; else git's two modes
  const mode = stat?.isFile() && !!(stat.mode & 0o100) === executable ? stat.mode & 0o7777 : executable ? 0o755 : 0o644;
  const temp = join(dirname(path), `.bhrain-rewind-${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, content, { mode, flag: 'wx' });
    await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
};

/**
 * .what = carries out a rewind plan: refuses (BadRequestError naming each path) when a path changed since the run,
 *         unless force; reads every blob it will write first (verified), then removes what the run created (and the
 *         directories it emptied), then writes what it changed or deleted
 * .why = no file is written until every content is known good: a damaged store fails before the checkout is touched
 */
export const applyRewind = async (
  store: CheckpointStore,
  input: { plan: RewindPlan; force: boolean },
  context: { env: Record<string, string | undefined> },
): Promise<void> => {
  const { plan } = input;
  if (plan.conflicts.length && !input.force)
    throw new BadRequestError(
      `${plan.conflicts.length} file(s) changed since the run, so nothing was restored: ${plan.conflicts
        .map((conflict) => `${conflict.path} (the run left ${conflict.expected}, it is ${conflict.found} now)`)
        .join('; ')}. Keep your change (commit or copy it), or give --force to restore them anyway`,
    );
  const restored = plan.steps.filter((step) => step.action === 'restore');
  const blobs = await readCheckpointObjects(
    store,
    restored.map((step) => step.blob!),
    context,
  );
  const removed = plan.steps.filter((step) => step.action === 'remove').map((step) => step.path);
  for (const path of removed) await removeFile(join(store.root, path));
  const kept = new Set(restored.flatMap((step) => ancestorsOf(step.path)));
  await removeEmptiedDirs(store.root, removed, kept);
  for (const step of restored) await writeEntry(store.root, step, blobs.get(step.blob!)!.content);
};

/** .what = the directories a relative path is in */
const ancestorsOf = (path: string): string[] => {
  const dirs: string[] = [];
  for (let dir = dirname(path); dir !== '.'; dir = dirname(dir)) dirs.push(dir);
  return dirs;
};

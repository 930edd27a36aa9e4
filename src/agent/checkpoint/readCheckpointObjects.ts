import { CheckpointStoreError, gitObjectId, type CheckpointStore } from './checkpointStore.js';
import { runHardenedGit } from '../git/runHardenedGit.js';

/** .what = one entry of a checkpoint's tree: its git mode (100644, 100755, 120000, 160000, 040000) and object id */
export interface CheckpointEntry {
  mode: string;
  id: string;
}

/** .what = an object read from the store, its id checked against its content */
interface StoreObject {
  type: string;
  content: Buffer;
}

/**
 * .what = objects read from the store with `git cat-file --batch`, each one's id recomputed from its content; a missing
 *         object, or one whose content does not hash to its id, is a CheckpointStoreError naming it
 * .why = the store is never read unverified: a damaged object file, a pruned alternate, or a planted one must never
 *        become a file written in the user's checkout
 */
export const readCheckpointObjects = async (
  store: CheckpointStore,
  ids: readonly string[],
  context: { env: Record<string, string | undefined> },
): Promise<Map<string, StoreObject>> => {
  const objects = new Map<string, StoreObject>();
  const wanted = [...new Set(ids)];
  if (!wanted.length) return objects;
  const run = await runHardenedGit(
    {
      cwd: store.root,
      args: ['cat-file', '--batch'],
      timeoutMs: 120_000,
      maxStdoutBytes: 2 * 1024 * 1024 * 1024 - 1,
      store: store.git,
      stdin: `${wanted.join('\n')}\n`,
      binary: true,
    },
    context,
  );
  if (!run.ran) throw new CheckpointStoreError(`the checkpoint store's git was not run: ${run.why}`);
  if (run.end.exitCode !== 0 || !run.bytes)
    throw new CheckpointStoreError(`git cat-file on the checkpoint store ${store.gitDir} failed (exit ${run.end.exitCode})`);
  const bytes = run.bytes;
  let at = 0;
  for (const id of wanted) {
    const eol = bytes.indexOf(10, at);
    const header = bytes.subarray(at, eol < 0 ? bytes.length : eol).toString('latin1');
    const [named, type, size] = header.split(' ');
    if (named !== id || type === 'missing' || size === undefined)
      throw new CheckpointStoreError(
        `the checkpoint store ${store.gitDir} has no object ${id} (${header}): it was pruned or damaged, so this checkpoint cannot be restored`,
      );
    const content = Buffer.from(bytes.subarray(eol + 1, eol + 1 + Number(size)));
    if (content.length !== Number(size) || gitObjectId(type, content) !== id)
      throw new CheckpointStoreError(
        `the checkpoint store ${store.gitDir} is damaged: object ${id} does not hash to its name; nothing was restored from it`,
      );
    objects.set(id, { type, content });
    at = eol + 1 + Number(size) + 1;
  }
  return objects;
};

/** .what = a tree object's entries by name */
const parseTree = (content: Buffer): Map<string, CheckpointEntry> => {
  const entries = new Map<string, CheckpointEntry>();
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(32, at);
    const nul = content.indexOf(0, space);
    const mode = content.subarray(at, space).toString('latin1').padStart(6, '0');
    entries.set(content.subarray(space + 1, nul).toString('utf8'), { mode, id: content.subarray(nul + 1, nul + 21).toString('hex') });
    at = nul + 21;
  }
  return entries;
};

const isTree = (entry: CheckpointEntry | null | undefined): entry is CheckpointEntry => entry?.mode === '040000';

/** .what = a checkpoint commit's tree id, the commit read verified */
export const readCheckpointTreeId = async (
  store: CheckpointStore,
  commit: string,
  context: { env: Record<string, string | undefined> },
): Promise<string> => {
  const object = (await readCheckpointObjects(store, [commit], context)).get(commit)!;
  const tree = /^tree ([0-9a-f]{40})$/m.exec(object.content.toString('utf8'));
  if (object.type !== 'commit' || !tree) throw new CheckpointStoreError(`${commit} in ${store.gitDir} is not a checkpoint (a commit)`);
  return tree[1];
};

/**
 * .what = every file path (blob, symlink or gitlink) whose entry differs between two checkpoint trees, with its entry in
 *         each (null: absent), found by walking both trees level by level and entering only subtrees whose ids differ
 * .why = what a rewind restores and checks; each tree it reads is verified, so a path it names was really recorded
 */
export const diffCheckpointTrees = async (
  store: CheckpointStore,
  from: string,
  to: string,
  context: { env: Record<string, string | undefined> },
): Promise<Map<string, { from: CheckpointEntry | null; to: CheckpointEntry | null }>> => {
  const changed = new Map<string, { from: CheckpointEntry | null; to: CheckpointEntry | null }>();
  let level: Array<{ prefix: string; from: string | null; to: string | null }> = [{ prefix: '', from, to }];
  while (level.length) {
    const ids = level.flatMap((pair) => [pair.from, pair.to]).filter((id): id is string => id !== null);
    const trees = await readCheckpointObjects(store, ids, context);
    const entriesOf = (id: string | null) => {
      if (id === null) return new Map<string, CheckpointEntry>();
      const object = trees.get(id)!;
      if (object.type !== 'tree') throw new CheckpointStoreError(`${id} in ${store.gitDir} is a ${object.type}, not a tree`);
      return parseTree(object.content);
    };
    const next: typeof level = [];
    for (const pair of level) {
      const a = entriesOf(pair.from);
      const b = entriesOf(pair.to);
      for (const name of new Set([...a.keys(), ...b.keys()])) {
        const before = a.get(name) ?? null;
        const after = b.get(name) ?? null;
        if (before?.mode === after?.mode && before?.id === after?.id) continue;
        const path = `${pair.prefix}${name}`;
        if (isTree(before) || isTree(after))
          next.push({ prefix: `${path}/`, from: isTree(before) ? before.id : null, to: isTree(after) ? after.id : null });
        // a file on one side, a directory on the other: the file is a change of its own
        const file = (entry: CheckpointEntry | null) => (isTree(entry) ? null : entry);
        if (file(before) || file(after)) changed.set(path, { from: file(before), to: file(after) });
      }
    }
    level = next;
  }
  return changed;
};

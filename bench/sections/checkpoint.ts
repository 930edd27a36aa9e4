import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { genGitCheckpointer } from 'rhachet-roles-bhrain';

import { spreadRow, type BenchOptions, type BenchSection } from '../BenchReport.js';
import { genFileTree, TREE_FILES, TREE_FILES_SMOKE } from './tools.js';

/** timed turns in a full run, after the first checkpoint */
const FULL_TURNS = 15;

/**
 * .what = the target of one turn's checkpoint on the generated tree: 500 ms, a tenth of a fast model turn (a request of
 *         a few seconds), so checkpoints never become a turn's main cost
 */
const TURN_TARGET_MS = 500;
const TURN_TARGET = `one turn's checkpoint within ${TURN_TARGET_MS} ms on ${TREE_FILES.toLocaleString('en-US')} files`;

/** .what = the milliseconds one call takes */
const timed = async (run: () => Promise<void>): Promise<number> => {
  const started = performance.now();
  await run();
  return performance.now() - started;
};

/**
 * .what = checkpoint section: the CLI's checkpointer (genGitCheckpointer, a shadow git store in a temp home) on the
 *         generated 100,000-file git tree of the tools section: the first checkpoint (a new store, every file hashed,
 *         as the first run in an untracked tree pays), then turns that changed one file, and turns that changed nothing
 * .why = a checkpoint is taken after every turn that may change files: its cost on a big tree is the question
 */
export const benchCheckpoint = async (options: BenchOptions): Promise<BenchSection> => {
  const files = options.smoke ? TREE_FILES_SMOKE : TREE_FILES;
  const turns = options.smoke ? 2 : FULL_TURNS;
  const tree = genFileTree(files);
  const home = mkdtempSync(join(tmpdir(), 'bhrain-bench-home-'));
  const changed: number[] = [];
  const unchanged: number[] = [];
  let first: number;
  let listed: number;
  try {
    const checkpointer = genGitCheckpointer(
      { cwd: tree.root, home, runId: 'bench', ignoredMaxBytes: 0, retention: { keepNewest: 100, keepDays: 7 } },
      { env: process.env },
    );
    first = await timed(() => checkpointer.beforeChange());
    options.log(`checkpoint: first checkpoint of ${files} files ${Math.round(first)} ms`);
    for (let turn = 1; turn <= turns; turn++) {
      writeFileSync(join(tree.root, 'packages', 'p0', 'src', 'm1', 'f1.ts'), `turn ${turn}\n`);
      changed.push(await timed(() => checkpointer.afterTurn({ turn: 2 * turn - 1 })));
      unchanged.push(await timed(() => checkpointer.afterTurn({ turn: 2 * turn })));
    }
    if (checkpointer.failure()) throw new Error(`the checkpointer failed: ${checkpointer.failure()}`);
    listed = checkpointer.checkpoints().length;
  } finally {
    rmSync(tree.root, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
  const count = files.toLocaleString('en-US');
  const target = { text: TURN_TARGET, met: (value: number) => value <= TURN_TARGET_MS };
  return {
    title: `Checkpoints: a turn's checkpoint on a generated ${count}-file git tree`,
    rows: [
      spreadRow(`first checkpoint, what the first call waits for (new store, ${count} untracked files hashed)`, 'ms', [first]),
      spreadRow(`one turn's checkpoint, 1 file changed (${count} files)`, 'ms', changed, target),
      spreadRow(`one turn's checkpoint, nothing changed (${count} files)`, 'ms', unchanged, target),
    ],
    notes: [
      `genGitCheckpointer on the tools section's generated tree (${tree.visible} files git does not ignore, the rest ignored), in a temp BHRAIN_HOME; ${turns} turns each, median, min and max; ${listed} checkpoints recorded (the first, and one per turn that changed a file: a turn that changed nothing records none).`,
      "A turn's checkpoint is `git add --all` into the store's own index (git's stat cache: only files whose stat changed are read), `write-tree`, and, when the tree differs, a commit and the run's ref written in-process and the list of files changed; each git runs hardened (its config read and disarmed first). The first call waits only for the `git add` of the first checkpoint: its tree and commit are written while the call runs, so here they are in the first changed turn's time. The tree's files are untracked, so the first checkpoint hashes them all; in a repository whose index holds them, the store's index is seeded from it and only what differs is hashed.",
    ],
  };
};

import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { tempDir } from '#test-helpers/fs.js';
import { genGitRepo, runGit } from '#test-helpers/git.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { CheckpointStoreError } from './checkpointStore.js';
import { CHECKPOINT_STORE_IDLE_DAYS, genGitCheckpointer, pruneCheckpointStore } from './genGitCheckpointer.js';
import { applyRewind, planRewind } from './rewindCheckpoints.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const RETENTION = { keepNewest: 100, keepDays: 7 };

/** .what = a repository with a committed file, a home for the store, and a checkpointer of one run over them */
const genRun = (input: { runId?: string; ignoredMaxBytes?: number; files?: Record<string, string> } = {}) => {
  const repo = genGitRepo({ prefix: 'bhrain-ckpt-repo-', files: input.files ?? { 'a.txt': 'a\n' }, commit: 'first' });
  const home = tempDir('bhrain-ckpt-home-');
  made.push(repo, home);
  const env = { PATH: process.env.PATH, HOME: home };
  const checkpointer = genGitCheckpointer(
    { cwd: repo, home, runId: input.runId ?? 'run-1', ignoredMaxBytes: input.ignoredMaxBytes ?? 0, retention: RETENTION },
    { env },
  );
  return { repo, home, env, checkpointer };
};

describe('genGitCheckpointer: what a turn costs', () => {
  it('a small tree compared in-process between turns: a same-size change is still recorded, an unchanged turn adds nothing', async () => {
    const { repo, checkpointer } = genRun();
    await checkpointer.beforeChange();
    const settle = () => new Promise((resolve) => setTimeout(resolve, 120));
    await settle();
    await checkpointer.afterTurn({ turn: 1 });
    await writeFile(join(repo, 'a.txt'), 'b\n');
    await settle();
    await checkpointer.afterTurn({ turn: 2 });
    await checkpointer.afterTurn({ turn: 3 });
    expect(checkpointer.checkpoints().map(({ turn, files }) => ({ turn, files }))).toEqual([
      { turn: 0, files: null },
      { turn: 2, files: { created: [], changed: ['a.txt'], deleted: [], omitted: 0 } },
    ]);
  });

  it("a directory without a file costs nothing until a turn makes one: no store while it stays empty, then git's empty tree as turn 0, which a rewind restores", async () => {
    const dir = tempDir('bhrain-ckpt-empty-');
    const home = tempDir('bhrain-ckpt-home-');
    made.push(dir, home);
    const env = { PATH: process.env.PATH, HOME: home };
    const checkpointer = genGitCheckpointer({ cwd: dir, home, runId: 'run-1', ignoredMaxBytes: 0, retention: RETENTION }, { env });
    await checkpointer.beforeChange();
    await checkpointer.afterTurn({ turn: 1 });
    expect(existsSync(checkpointer.store.gitDir)).toBe(false);
    expect(checkpointer.checkpoints()).toEqual([]);
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src', 'made.txt'), 'made\n');
    await checkpointer.afterTurn({ turn: 2 });
    expect(checkpointer.failure()).toBeNull();
    const [before, after] = checkpointer.checkpoints();
    expect([before.turn, before.files, after.turn, after.files]).toEqual([
      0,
      null,
      2,
      { created: ['src/made.txt'], changed: [], deleted: [], omitted: 0 },
    ]);
    // what was written in-process (the commits, the ref) is what git itself reads, and whole
    expect(() => runGit(dir, ['--git-dir', checkpointer.store.gitDir, 'fsck', '--strict', '--no-dangling'])).not.toThrow();
    const plan = await planRewind(checkpointer.store, { target: before.hash, last: after.hash }, { env });
    await applyRewind(checkpointer.store, { plan, force: false }, { env });
    expect(await readdir(dir, { recursive: true })).toEqual([]);
  });

  it('a later checkpoint that fails (a damaged store index) is said once by afterTurn, and no promise is left to reject unhandled', async () => {
    const { repo, checkpointer } = genRun();
    await checkpointer.beforeChange();
    await checkpointer.afterTurn({ turn: 1 });
    await writeFile(checkpointer.store.git.indexFile, 'not an index');
    await writeFile(join(repo, 'a.txt'), 'changed\n');
    await expect(checkpointer.afterTurn({ turn: 2 })).rejects.toThrow(/git add on the checkpoint store .* failed/);
    expect(checkpointer.failure()).toMatch(/git add on the checkpoint store/);
    await writeFile(join(repo, 'a.txt'), 'changed again\n');
    await checkpointer.afterTurn({ turn: 3 });
    expect(checkpointer.checkpoints().map(({ turn }) => turn)).toEqual([0]);
  });

  it('a run id that is no plain ref name is refused before anything is written: the ref is a file the checkpointer writes', () => {
    const home = tempDir('bhrain-ckpt-home-');
    made.push(home);
    for (const runId of ['../escape', 'a/../../b', '.hidden', 'run.lock', 'a b', ''])
      expect(() => genGitCheckpointer({ cwd: home, home, runId, ignoredMaxBytes: 0, retention: RETENTION }, { env: {} }), runId).toThrow(
        BadRequestError,
      );
    expect(existsSync(join(home, 'checkpoints'))).toBe(false);
  });

  it('outside any repository, a tree of more entries than the bound is not copied: the run records nothing, and says why', async () => {
    const dir = tempDir('bhrain-ckpt-plain-');
    const home = tempDir('bhrain-ckpt-home-');
    made.push(dir, home);
    await Promise.all(Array.from({ length: 30 }, (_, index) => writeFile(join(dir, `f${index}.txt`), 'x')));
    const checkpointer = genGitCheckpointer(
      { cwd: dir, home, runId: 'run-1', ignoredMaxBytes: 0, retention: RETENTION, maxEntriesOutsideGit: 20 },
      { env: { PATH: process.env.PATH, HOME: home } },
    );
    await expect(checkpointer.beforeChange()).rejects.toThrow(/is in no git repository and holds more than 20 entries/);
    await checkpointer.afterTurn({ turn: 1 });
    expect([checkpointer.checkpoints(), existsSync(join(home, 'checkpoints'))]).toEqual([[], false]);
    expect(checkpointer.failure()).toMatch(/this run takes no checkpoints and cannot be rewound/);
  });
});

describe('genGitCheckpointer', () => {
  it('records nothing until a turn may change files, then the state before it and after each turn that changed files', async () => {
    const { repo, home, checkpointer } = genRun();
    expect(existsSync(join(home, 'checkpoints'))).toBe(false);
    await checkpointer.afterTurn({ turn: 1 });
    expect(existsSync(join(home, 'checkpoints'))).toBe(false);
    await checkpointer.beforeChange();
    await writeFile(join(repo, 'b.txt'), 'b\n');
    await checkpointer.afterTurn({ turn: 1 });
    await checkpointer.beforeChange();
    await checkpointer.afterTurn({ turn: 2 });
    expect(checkpointer.failure()).toBeNull();
    expect(checkpointer.checkpoints().map(({ turn, files }) => ({ turn, files }))).toEqual([
      { turn: 0, files: null },
      { turn: 1, files: { created: ['b.txt'], changed: [], deleted: [], omitted: 0 } },
    ]);
  });

  it('runs no filter nor fsmonitor the repository configures, and converts no line ending: the bytes on disk are what is restored', async () => {
    const { repo, env, checkpointer } = genRun({ files: { 'a.txt': 'a\n', '.gitattributes': '* filter=evil text eol=crlf\n' } });
    const marker = join(repo, '..', `marker-${Date.now()}`);
    made.push(marker);
    runGit(repo, ['config', 'filter.evil.clean', `sh -c 'touch ${marker}; cat'`]);
    runGit(repo, ['config', 'core.fsmonitor', `sh -c 'touch ${marker}'`]);
    await checkpointer.beforeChange();
    await writeFile(join(repo, 'a.txt'), 'changed\r\nbytes\n');
    await checkpointer.afterTurn({ turn: 1 });
    await writeFile(join(repo, 'a.txt'), 'later\n');
    await checkpointer.afterTurn({ turn: 2 });
    expect(checkpointer.failure()).toBeNull();
    expect(existsSync(marker)).toBe(false);
    const [, afterOne, last] = checkpointer.checkpoints();
    const plan = await planRewind(checkpointer.store, { target: afterOne.hash, last: last.hash }, { env });
    await applyRewind(checkpointer.store, { plan, force: false }, { env });
    expect(await readFile(join(repo, 'a.txt'), 'utf8')).toBe('changed\r\nbytes\n');
  });

  it('ignored files are outside checkpoints by default; with ignoredMaxBytes, those up to the cap are in, bigger ones never', async () => {
    const off = genRun({ files: { '.gitignore': '*.log\n' } });
    await off.checkpointer.beforeChange();
    await writeFile(join(off.repo, 'small.log'), 'x\n');
    await off.checkpointer.afterTurn({ turn: 1 });
    expect(off.checkpointer.checkpoints()).toHaveLength(1);

    const on = genRun({ files: { '.gitignore': '*.log\n' }, ignoredMaxBytes: 10 });
    await on.checkpointer.beforeChange();
    await writeFile(join(on.repo, 'small.log'), 'x\n');
    await writeFile(join(on.repo, 'big.log'), 'x'.repeat(11));
    await on.checkpointer.afterTurn({ turn: 1 });
    expect(on.checkpointer.checkpoints().at(-1)?.files?.created).toEqual(['small.log']);
  });

  it('the store is never read unverified: an object swapped for another is refused by name, and nothing is written', async () => {
    const { repo, env, checkpointer } = genRun();
    await checkpointer.beforeChange();
    await writeFile(join(repo, 'a.txt'), 'the run wrote this\n');
    await checkpointer.afterTurn({ turn: 1 });
    const [before, last] = checkpointer.checkpoints();
    // the blob of a.txt before the run, where the store reads it (its own objects, or the repository's through
    // alternates), overwritten by another object's file: git serves it under the old name without a word
    const blob = runGit(repo, ['rev-parse', 'HEAD:a.txt']).trim();
    const other = runGit(repo, ['hash-object', '-w', '--stdin']).trim();
    const objectPath = (objects: string, id: string) => join(objects, id.slice(0, 2), id.slice(2));
    for (const objects of [join(checkpointer.store.gitDir, 'objects'), join(repo, '.git', 'objects')])
      if (existsSync(objectPath(objects, blob))) {
        await chmod(objectPath(objects, blob), 0o644);
        await copyFile(objectPath(join(repo, '.git', 'objects'), other), objectPath(objects, blob));
      }
    const plan = await planRewind(checkpointer.store, { target: before.hash, last: last.hash }, { env });
    await expect(applyRewind(checkpointer.store, { plan, force: false }, { env })).rejects.toThrow(CheckpointStoreError);
    await expect(applyRewind(checkpointer.store, { plan, force: false }, { env })).rejects.toThrow(/does not hash to its name/);
    expect(await readFile(join(repo, 'a.txt'), 'utf8')).toBe('the run wrote this\n');
  });

  it('three runs in one repository checkpoint at the same time: each succeeds, with its own checkpoints', async () => {
    const { repo, home, env } = genRun();
    // enough files that one run's `git add` and `write-tree` still hold git's index.lock when another's start
    await mkdir(join(repo, 'many'));
    await Promise.all(Array.from({ length: 3_000 }, (_, index) => writeFile(join(repo, 'many', `f${index}.txt`), `${index}\n`)));
    const runs = ['run-x', 'run-y', 'run-z'].map((runId) =>
      genGitCheckpointer({ cwd: repo, home, runId, ignoredMaxBytes: 0, retention: RETENTION }, { env }),
    );
    await Promise.all(runs.map((run) => run.beforeChange()));
    for (let turn = 1; turn <= 4; turn++) {
      await writeFile(join(repo, `turn-${turn}.txt`), `${turn}\n`);
      await Promise.all(runs.map((run) => run.afterTurn({ turn })));
    }
    for (const run of runs) {
      expect(run.failure()).toBeNull();
      expect(run.checkpoints().map(({ turn }) => turn)).toEqual([0, 1, 2, 3, 4]);
    }
  }, 30_000);

  it("old checkpoints are pruned by age and count: a run's ref goes once it is older than keepDays and not among the keepNewest", async () => {
    const { repo, home, env } = genRun();
    for (const runId of ['run-a', 'run-b', 'run-c']) {
      const checkpointer = genGitCheckpointer({ cwd: repo, home, runId, ignoredMaxBytes: 0, retention: RETENTION }, { env });
      await checkpointer.beforeChange();
      await writeFile(join(repo, `${runId}.txt`), `${runId}\n`);
      await checkpointer.afterTurn({ turn: 1 });
    }
    const { store } = genGitCheckpointer({ cwd: repo, home, runId: 'x', ignoredMaxBytes: 0, retention: RETENTION }, { env });
    const later = () => new Date(Date.now() + 8 * 86_400_000);
    expect(await pruneCheckpointStore(store, RETENTION, { env, now: later })).toEqual([]);
    expect(await pruneCheckpointStore(store, { keepNewest: 1, keepDays: 7 }, { env })).toEqual([]);
    const pruned = await pruneCheckpointStore(store, { keepNewest: 1, keepDays: 7 }, { env, now: later });
    expect(pruned.sort()).toEqual(['run-a', 'run-b']);
    expect(await readdir(join(store.gitDir, 'refs', 'bhrain', 'runs'))).toEqual(['run-c']);
  });

  it(`a store no run has opened for ${CHECKPOINT_STORE_IDLE_DAYS} days is removed whole when a run opens another`, async () => {
    const idle = genRun();
    await idle.checkpointer.beforeChange();
    // the first checkpoint is recorded (and old stores pruned) while the first calls run: done by the turn's end
    await idle.checkpointer.afterTurn({ turn: 1 });
    const old = new Date(Date.now() - (CHECKPOINT_STORE_IDLE_DAYS + 1) * 86_400_000);
    await utimes(join(idle.checkpointer.store.gitDir, 'last-used'), old, old);
    const recent = genGitCheckpointer(
      { cwd: genRun().repo, home: idle.home, runId: 'run-2', ignoredMaxBytes: 0, retention: RETENTION },
      { env: idle.env },
    );
    const kept = genGitCheckpointer(
      { cwd: genRun().repo, home: idle.home, runId: 'run-3', ignoredMaxBytes: 0, retention: RETENTION },
      { env: idle.env },
    );
    await kept.beforeChange();
    await kept.afterTurn({ turn: 1 });
    await recent.beforeChange();
    await recent.afterTurn({ turn: 1 });
    expect(existsSync(idle.checkpointer.store.gitDir)).toBe(false);
    expect(existsSync(kept.store.gitDir)).toBe(true);
  });
});

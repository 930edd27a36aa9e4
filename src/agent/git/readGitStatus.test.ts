import { execFileSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genRecordingLog } from '#standin/useStandin.js';
import { readGitStatus } from './readGitStatus.js';
import { genGitRepo } from '#test-helpers/git.js';
import { tempDir } from '#test-helpers/fs.js';

/** git in a directory, with an identity of its own so commits work anywhere */
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=test@example.com', '-c', 'user.name=test', ...args], { cwd, encoding: 'utf8' }).trim();

/** a real repository on branch `trunk` with one commit of a.txt and b.txt */
const genRepo = async () =>
  genGitRepo({ prefix: 'bhrain-git-', branch: 'trunk', files: { 'a.txt': 'a\n', 'b.txt': 'b\n' }, commit: 'first' });

describe('git awareness: readGitStatus', () => {
  it('git awareness: the root, the branch and the dirty counts of a repo with a change and an untracked file, from a subdir', async () => {
    const repo = await genRepo();
    await writeFile(join(repo, 'a.txt'), 'changed\n');
    await writeFile(join(repo, 'new.txt'), 'untracked\n');
    await mkdir(join(repo, 'src'));
    await writeFile(join(repo, 'src', 'staged.ts'), 'x\n');
    git(repo, 'add', 'src/staged.ts');
    const status = await readGitStatus({ cwd: join(repo, 'src') });
    expect(status).toEqual({
      root: repo,
      branch: 'trunk',
      commit: git(repo, 'rev-parse', '--short=7', 'HEAD'),
      changed: 2,
      conflicted: 0,
      untracked: 1,
    });
  });

  it('git awareness: a clean tree, a detached HEAD, and a repo with no commits yet', async () => {
    const repo = await genRepo();
    expect(await readGitStatus({ cwd: repo })).toMatchObject({ branch: 'trunk', changed: 0, untracked: 0 });
    git(repo, 'checkout', '-q', '--detach');
    expect(await readGitStatus({ cwd: repo })).toMatchObject({ branch: null, commit: expect.stringMatching(/^[0-9a-f]{7}$/) });
    const fresh = tempDir('bhrain-git-fresh-');
    git(fresh, 'init', '-q', '-b', 'main');
    expect(await readGitStatus({ cwd: fresh })).toEqual({
      root: fresh,
      branch: 'main',
      commit: null,
      changed: 0,
      conflicted: 0,
      untracked: 0,
    });
  });

  it('git awareness: outside a repository it is null, with a debug line and no git process', async () => {
    const outside = tempDir('bhrain-git-none-');
    const { log, lines } = genRecordingLog();
    // a PATH with no git at all: outside a repository, git is never looked for
    expect(await readGitStatus({ cwd: outside }, { log, env: { PATH: outside } })).toBeNull();
    expect(lines).toEqual([{ level: 'debug', message: `git status: ${outside} is not in a git repository`, meta: undefined }]);
  });

  it('git awareness: without git it is skipped silently (a debug line)', async () => {
    const repo = await genRepo();
    const { log, lines } = genRecordingLog();
    expect(await readGitStatus({ cwd: repo }, { log, env: { PATH: join(repo, 'no-bin') } })).toBeNull();
    expect(lines.map((line) => [line.level, line.message])).toEqual([['debug', 'git status skipped: git is not installed']]);
  });

  it('git awareness: a git that hangs is given up after the 1 s timeout, silently', async () => {
    const repo = await genRepo();
    // outside the repository: git is never taken from the workspace
    const bin = join(tempDir('bhrain-git-slow-'), 'slow-bin');
    await mkdir(bin);
    await writeFile(join(bin, 'git'), '#!/bin/sh\nexec sleep 30\n');
    await chmod(join(bin, 'git'), 0o755);
    const { log, lines } = genRecordingLog();
    const started = performance.now();
    expect(await readGitStatus({ cwd: repo }, { log, env: { PATH: `${bin}:${process.env.PATH}` } })).toBeNull();
    const elapsedMs = performance.now() - started;
    expect(elapsedMs).toBeGreaterThanOrEqual(990);
    expect(elapsedMs).toBeLessThan(2_000);
    expect(lines.map((line) => [line.level, line.message])).toEqual([['debug', 'git status skipped: git took longer than 1000 ms']]);
  });
});

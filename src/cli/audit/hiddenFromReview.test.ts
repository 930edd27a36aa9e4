import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { startRunAudit } from './genRunAudit.js';
import { tempDir } from '#test-helpers/fs.js';

// what hides a change from `git status` and `git diff`: an index bit, a rule in info/exclude or info/attributes. The
// audit compares them at the run's start and end and names each as hidden from review

let base: string;
let repo: string;
let env: Record<string, string | undefined>;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
    cwd: repo,
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
  });

beforeEach(() => {
  base = tempDir('bhrain-hidden-');
  repo = join(base, 'repo');
  mkdirSync(repo);
  mkdirSync(join(base, 'home'));
  env = { PATH: process.env.PATH, HOME: join(base, 'home') };
  git('init', '-q', '-b', 'main');
  for (const name of ['skip.txt', 'assume.txt', 'diff.txt', 'sparse.txt']) writeFileSync(join(repo, name), `${name}\n`);
  git('add', '.');
  git('commit', '-qm', 'first');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** .what = an audit around `act`, as a run's: its start state read, one tool call, then its end */
const auditAround = async (act: () => void) => {
  const audit = startRunAudit(
    { cwd: repo, redact: (text) => text, budget: { maxFiles: 1_000, maxHashBytes: 1 << 20, maxMs: 10_000 } },
    { env },
  );
  audit.begin();
  await audit
    .guard({ name: 'allow', check: () => ({ decision: 'allow' }) })
    .check({ call: { id: '1', name: 'bash', input: {} } }, { cwd: repo });
  audit.onEvent({ type: 'ToolCallStarted', sessionUuid: 's', callId: '1', toolName: 'bash', input: {}, occurredAt: '' });
  act();
  return audit.finish({ network: null, tokens: null, costUsd: null, subagents: [] });
};

describe('the audit names what hides a change from git status and git diff', () => {
  it('skip-worktree and assume-unchanged set during the run, info/attributes `-diff` and info/exclude: none shows in git status, each is named', async () => {
    const result = await auditAround(() => {
      git('update-index', '--skip-worktree', 'skip.txt');
      appendFileSync(join(repo, 'skip.txt'), 'changed\n');
      git('update-index', '--assume-unchanged', 'assume.txt');
      appendFileSync(join(repo, 'assume.txt'), 'changed\n');
      writeFileSync(join(repo, '.git', 'info', 'attributes'), 'diff.txt -diff\n');
      appendFileSync(join(repo, 'diff.txt'), 'changed\n');
      appendFileSync(join(repo, '.git', 'info', 'exclude'), 'planted.txt\n');
      writeFileSync(join(repo, 'planted.txt'), 'planted\n');
    });
    // the control: git status shows only diff.txt (whose diff git no longer shows)
    expect(git('status', '--porcelain')).toBe(' M diff.txt\n');
    expect(git('diff', 'diff.txt')).toContain('Binary files a/diff.txt and b/diff.txt differ');
    expect(result.version).toBe(2);
    expect(result.hidden).toEqual({
      index: {
        items: [
          { path: 'assume.txt', bits: ['assume-unchanged'], setBy: 'run' },
          { path: 'skip.txt', bits: ['skip-worktree'], setBy: 'run' },
        ],
        omitted: 0,
      },
      files: {
        items: [
          { path: '.git/info/attributes', change: 'created' },
          { path: '.git/info/exclude', change: 'changed' },
        ],
        omitted: 0,
      },
      unread: null,
    });
  });

  it('a bit set before the run is named only where the run changed its file; a core.excludesFile inside the workspace is watched', async () => {
    git('update-index', '--skip-worktree', 'sparse.txt', 'skip.txt');
    git('config', 'core.excludesFile', 'ignored-by-config');
    writeFileSync(join(repo, 'ignored-by-config'), '');
    const result = await auditAround(() => {
      appendFileSync(join(repo, 'skip.txt'), 'changed\n');
      writeFileSync(join(repo, 'ignored-by-config'), 'planted.txt\n');
    });
    expect(result.hidden.index.items).toEqual([{ path: 'skip.txt', bits: ['skip-worktree'], setBy: 'before' }]);
    expect(result.hidden.files.items).toEqual([{ path: 'ignored-by-config', change: 'changed' }]);
  });

  it('outside a repository there is nothing to hide from git: both lists are empty, and nothing is unread', async () => {
    rmSync(join(repo, '.git'), { recursive: true, force: true });
    expect((await auditAround(() => {})).hidden).toEqual({
      index: { items: [], omitted: 0 },
      files: { items: [], omitted: 0 },
      unread: null,
    });
  });
});

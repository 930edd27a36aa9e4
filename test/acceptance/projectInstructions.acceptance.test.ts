// project instructions (AGENTS.md, CLAUDE.md), the system prompt flags and the git line, through the built CLI
// as a child process, in real temp git repositories, against the stand-in
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { systemOf } from '#standin/requestParts.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let userConfig: string;
let repo: string;
let sub: string;

/** git in the temp repo, with an identity of its own so commits work anywhere */
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo, encoding: 'utf8' });

beforeEach(async () => {
  const base = tempDir('bhrain-instructions-cli-');
  home = join(base, 'home');
  userConfig = join(base, 'user-config');
  repo = join(base, 'repo');
  sub = join(repo, 'packages', 'app');
  await mkdir(sub, { recursive: true });
  await mkdir(userConfig);
  git('init', '-q', '-b', 'feature/login');
  await writeFile(join(repo, 'AGENTS.md'), 'ROOT-RULE: run npm test before you finish\n');
  await writeFile(join(sub, 'AGENTS.md'), 'SUB-RULE: this package uses tabs\n');
  await writeFile(join(repo, 'tracked.txt'), 'v1\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
});
// the user-level config dir is a temp dir of the test's own, never the real ~/.config/bhrain
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home }, { BHRAIN_CONFIG_DIR: userConfig, ...overrides });

const firstSystem = () => systemOf(standin().requests[0]);

describe('project instructions: AGENTS.md and CLAUDE.md reach the model', () => {
  it('project instructions: AGENTS.md at the root and in a subdir both reach the model, root → subdir, when run from the subdir (and the user-level one first)', async () => {
    await writeFile(join(userConfig, 'CLAUDE.md'), 'USER-RULE: be brief\n');
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', 'hi'], cwd: sub, env: envFor() });
    expect(run.code).toBe(0);
    const system = firstSystem();
    expect(system).toContain('<project-instructions>');
    const order = ['USER-RULE', 'ROOT-RULE', 'SUB-RULE'].map((rule) => system.indexOf(rule));
    expect(order.every((at) => at > -1)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(system).toContain(
      `<file path="${join(repo, 'AGENTS.md')}">\nROOT-RULE: run npm test before you finish\n</file>\n<file path="${join(sub, 'AGENTS.md')}">\nSUB-RULE: this package uses tabs\n</file>`,
    );
    // in the system prompt only, never a message
    const conversation = standin().requests[0].body.messages.filter((message: { role: string }) => message.role !== 'system');
    expect(JSON.stringify(conversation)).not.toContain('ROOT-RULE');
  });

  it('project instructions: --no-project-instructions removes them (the git line stays)', async () => {
    await writeFile(join(userConfig, 'AGENTS.md'), 'USER-RULE\n');
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--no-project-instructions', 'hi'], cwd: sub, env: envFor() });
    expect(run.code).toBe(0);
    expect(firstSystem()).not.toMatch(/project-instructions|ROOT-RULE|SUB-RULE|USER-RULE/);
    expect(firstSystem()).toContain(`It is in the git repository ${repo}`);
  });

  it('project instructions: a rule from AGENTS.md survives a compaction: the request after it still carries the rule in its system prompt', async () => {
    // an unknown qwen model: a 32k window, compacted at 80%; each file read is ~7k tokens
    for (let n = 1; n <= 8; n++) await writeFile(join(repo, `big${n}.txt`), `${`file ${n} `.padEnd(70, 'x')}\n`.repeat(380));
    let summarized = false;
    let reads = 0;
    standin().respond = (request) => {
      if (systemOf(request).includes('You compact the working memory')) {
        summarized = true;
        return { text: 'SUMMARY: big files read so far' };
      }
      return summarized || reads === 8 ? { text: 'done' } : { toolCalls: [{ name: 'read', input: { path: `big${++reads}.txt` } }] };
    };
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--model', 'standin-32k', '-o', 'stream-json', 'read the big files'],
      cwd: repo,
      env: envFor(),
    });

    expect(run.code).toBe(0);
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(events.filter((event) => event.type === 'Compacted')).toHaveLength(1);
    const requests = standin().requests;
    const summary = requests.findIndex((request) => systemOf(request).includes('You compact the working memory'));
    expect(summary).toBeGreaterThan(0);
    const after = requests[summary + 1];
    expect(JSON.stringify(after.body.messages)).toContain('SUMMARY: big files read so far');
    expect(JSON.stringify(after.body.messages)).not.toContain('file 1 xxx');
    expect(systemOf(after)).toContain('ROOT-RULE: run npm test before you finish');
    expect(events.at(-1)).toMatchObject({ type: 'result', output: 'done' });
  });

  it('project instructions: over the 32 KiB cap the block says where a file was cut, and a warning says so on stderr and in the JSON', async () => {
    await writeFile(join(sub, 'AGENTS.md'), `SUB-RULE first line\n${'y'.repeat(39_979)}\n`); // 40,000 bytes
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'json', 'hi'], cwd: sub, env: envFor() });
    expect(run.code).toBe(0);
    const system = firstSystem();
    expect(system).toContain('ROOT-RULE: run npm test before you finish\n</file>');
    expect(system).toMatch(
      /\n\[bhrain: this file was cut here, after 3272\d of its 40000 bytes: project instructions are capped at 32768 bytes in all, shared among the files\. Read the file for the rest\.\]\n<\/file>/,
    );
    const warning = `project instructions are over the cap of 32768 bytes: ${join(sub, 'AGENTS.md')} cut to`;
    expect(run.stderr).toContain(`warning: ${warning}`);
    expect(JSON.parse(run.stdout).warnings).toEqual([expect.stringContaining(warning)]);
  });
});

describe('project instructions: --append-system-prompt and --system-prompt-file', () => {
  it('project instructions: --system-prompt-file and then --append-system-prompt reach the model, at the end of the system prompt', async () => {
    await writeFile(join(repo, 'extra-prompt.md'), 'FROM-THE-FILE: prefer small diffs\n');
    standin().script({ text: 'ok' });
    const run = await runBhrain({
      args: [
        'ask',
        '--atom',
        'qwen',
        '--system-prompt-file',
        '../../extra-prompt.md',
        '--append-system-prompt',
        'FROM-THE-FLAG: reply in French',
        'hi',
      ],
      cwd: sub,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(firstSystem()).toMatch(
      /SUB-RULE: this package uses tabs\n<\/file>\n<\/project-instructions>\n\nFROM-THE-FILE: prefer small diffs\n\nFROM-THE-FLAG: reply in French$/,
    );
  });

  it('project instructions: a secret of the environment in AGENTS.md or --append-system-prompt never reaches the model', async () => {
    const secret = 'sk-test-0123456789abcdef';
    await writeFile(join(repo, 'AGENTS.md'), `deploy with ${secret}\n`);
    standin().script({ text: 'ok' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--append-system-prompt', `key ${secret}`, 'hi'],
      cwd: repo,
      env: envFor({ DEPLOY_API_KEY: secret }),
    });
    expect(run.code).toBe(0);
    expect(firstSystem()).toContain('deploy with ');
    expect(JSON.stringify(standin().requests[0].body)).not.toContain(secret);
  });

  it('project instructions: a missing --system-prompt-file is exit 2 naming the flag, before any request', async () => {
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--system-prompt-file', 'nope.md', 'hi'], cwd: sub, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--system-prompt-file nope.md: not a readable file (ENOENT); give the path of a text file');
    expect(standin().requests).toHaveLength(0);
  });
});

describe('git awareness: the git line in the system prompt', () => {
  it('git awareness: a repo with a change and an untracked file: the root, the branch and the counts, never a file name', async () => {
    await writeFile(join(repo, 'tracked.txt'), 'v2\n');
    await writeFile(join(repo, 'secret-plan.txt'), 'untracked\n');
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', 'hi'], cwd: sub, env: envFor() });
    expect(run.code).toBe(0);
    expect(firstSystem()).toContain(
      `You work in the directory ${sub} on ${process.platform}. Relative paths resolve there. It is in the git repository ${repo}: branch feature/login; working tree dirty (1 changed, 1 untracked), as of the session's start.`,
    );
    expect(firstSystem()).not.toMatch(/secret-plan|tracked\.txt/);
  });

  it('git awareness: outside a repository there is no git line (and only the cwd is read for AGENTS.md)', async () => {
    const outside = tempDir('bhrain-no-repo-');
    await writeFile(join(outside, 'AGENTS.md'), 'HERE-RULE\n');
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', 'hi'], cwd: outside, env: envFor() });
    expect(run.code).toBe(0);
    expect(firstSystem()).not.toContain('git repository');
    expect(firstSystem()).toContain(`<file path="${join(outside, 'AGENTS.md')}">\nHERE-RULE\n</file>`);
  });
});

// the end-of-run audit, proved through the built CLI against the stand-in: the JSON's `audit` (valid
// against schemas/output.schema.json), the run record's audit.json, and the GitHub job summary built from it
import { execFileSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { oneValidObject } from './outputSchema.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-audit-home-');
  cwd = tempDir('bhrain-audit-cwd-');
});
afterEach(async () => {
  await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
});

const SECRET = 'ghs_auditS3cr3tV4lu3xyz';
/** .what = an act run with bash unconfined, rules that allow bash, write, edit and task but deny curl, on GitHub, JSON out */
const runAct = async (turns: Parameters<ReturnType<typeof standin>['script']>, wrapper?: string[]) => {
  await writeFile(join(home, 'rules.json'), JSON.stringify({ allow: ['bash', 'write', 'edit', 'task'], deny: ['bash(curl *)'] }));
  standin().script(...turns);
  const summary = join(home, 'step-summary.md');
  const run = await runBhrain({
    args: ['act', '--atom', 'qwen', '--sandbox', 'off', '--permission', join(home, 'rules.json'), '--output', 'json', 'do it'],
    cwd,
    env: genCliEnv({ standin: standin(), home }, { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary, DEPLOY_TOKEN: SECRET }),
    wrapper,
  });
  return { run, summary };
};

describe('the end-of-run audit', () => {
  it('a run that creates, edits and deletes files (by bash and by the file tools) and is denied once: the audit lists each change, the command, the denial, the spend; JSON, record and summary agree, with no secret', async () => {
    await Promise.all([
      writeFile(join(cwd, 'keep.txt'), 'untouched\n'),
      writeFile(join(cwd, 'edit-me.txt'), 'var x = 1;\n'),
      writeFile(join(cwd, 'append-me.txt'), 'one\n'),
      writeFile(join(cwd, 'gone.txt'), 'bye\n'),
      writeFile(join(cwd, 'overwrite-me.txt'), 'old\n'),
    ]);
    const bashCommand = `echo made > by-bash.txt && echo two >> append-me.txt && rm gone.txt && mkdir -p sub/deep && echo x > sub/deep/f.txt && touch 'named-${SECRET}.txt'`;
    const { run, summary } = await runAct([
      {
        toolCalls: [
          { name: 'write', input: { path: 'by-tool.txt', content: 'new\n' } },
          { name: 'write', input: { path: 'overwrite-me.txt', content: 'new\n' } },
          { name: 'edit', input: { path: 'edit-me.txt', old_string: 'var x', new_string: 'const x' } },
          { name: 'bash', input: { command: bashCommand } },
          { name: 'bash', input: { command: 'curl http://127.0.0.1:9/nothing' } },
        ],
      },
      { text: 'done' },
    ]);
    expect(run.code, run.stderr).toBe(0);
    const json = oneValidObject(run.stdout);
    const { audit } = json;
    expect(audit.version).toBe(2);
    expect(audit.files.changed).toEqual({ items: ['append-me.txt', 'edit-me.txt', 'overwrite-me.txt'], omitted: 0 });
    expect(audit.files.deleted).toEqual({ items: ['gone.txt'], omitted: 0 });
    const created: string[] = audit.files.created.items;
    expect(created.filter((path) => !path.startsWith('named-'))).toEqual(['by-bash.txt', 'by-tool.txt', 'sub/deep/f.txt']);
    expect(created.filter((path) => path.startsWith('named-'))).toHaveLength(1);
    expect({ complete: audit.files.complete, cut: audit.files.cut }).toEqual({ complete: true, cut: [] });
    // the command that ran, with its exit code and duration; the denied one never ran, and is counted as a denial
    expect(audit.commands.items).toHaveLength(1);
    expect(audit.commands.items[0]).toMatchObject({ exitCode: 0 });
    expect(audit.commands.items[0].command).toContain('echo made > by-bash.txt');
    expect(audit.commands.items[0].durationMs).toBeGreaterThanOrEqual(0);
    expect({ denied: audit.denied, toolCallsDenied: json.toolCalls.denied }).toEqual({ denied: 1, toolCallsDenied: 1 });
    expect({ tools: audit.tools, subagents: audit.subagents, network: audit.network }).toEqual({
      tools: [],
      subagents: { items: [], omitted: 0 },
      network: null,
    });
    expect(audit.tokens.input).toBeGreaterThan(0);
    expect(audit.wallTimeMs).toBeGreaterThan(0);
    expect(audit.costUsd).toBe(json.metrics.cost.usd);
    expect(run.stdout).not.toContain(SECRET);

    // the run record keeps the same audit
    const recorded = JSON.parse(await readFile(join(json.record, 'audit.json'), 'utf8'));
    expect(recorded.files).toEqual(audit.files);
    expect(JSON.stringify(recorded)).not.toContain(SECRET);

    // the job summary's files and commands are the audit's
    const markdown = await readFile(summary, 'utf8');
    expect(markdown).toContain('### Files changed in the working directory');
    expect(markdown).toContain('Created (4):');
    expect(markdown).toContain('Changed (3):\n\n```text\nappend-me.txt\nedit-me.txt\noverwrite-me.txt\n```');
    expect(markdown).toContain('Deleted (1):\n\n```text\ngone.txt\n```');
    expect(markdown).toMatch(/### Commands run \(1\)\n\n```text\n\$ echo made > by-bash\.txt[^\n]*# exit 0, \d+\.\d s\n```/);
    expect(markdown).not.toContain(SECRET);
  });

  it("a subagent's commands are in the audit after the run's own, naming the subagent, and its file changes are in files", async () => {
    const messages = (request: StandinRequest): { role: string; content: unknown }[] => request.body.messages;
    const isChild = (request: StandinRequest) =>
      JSON.stringify(messages(request).find((m) => m.role === 'user')).includes('make the child file');
    standin().respond = (request) => {
      const answered = messages(request).some((message) => message.role === 'tool');
      if (isChild(request))
        return answered ? { text: 'made it' } : { toolCalls: [{ name: 'bash', input: { command: 'echo c > by-child.txt; exit 3' } }] };
      if (answered) return { text: 'the child made it' };
      const task = { description: 'make a file', prompt: 'make the child file', subagent_type: 'general-purpose' };
      return {
        toolCalls: [
          { name: 'bash', input: { command: 'echo p > by-parent.txt' } },
          { name: 'task', input: task },
        ],
      };
    };
    const { run, summary } = await runAct([]);
    expect(run.code, run.stderr).toBe(0);
    const { audit } = oneValidObject(run.stdout);
    expect(audit.files.created.items).toEqual(['by-child.txt', 'by-parent.txt']);
    const [child] = audit.subagents.items;
    expect(child).toMatchObject({ type: 'general-purpose', description: 'make a file', status: 'COMPLETED' });
    expect(audit.commands.items).toEqual([
      { command: 'echo p > by-parent.txt', exitCode: 0, durationMs: expect.any(Number), subagent: null },
      { command: 'echo c > by-child.txt; exit 3', exitCode: 3, durationMs: null, subagent: child.uuid },
    ]);
    expect(await readFile(summary, 'utf8')).toContain('$ echo c > by-child.txt; exit 3  # exit 3, in the general-purpose subagent');
  });

  it('hostile: a model that writes 100,000 files and makes a 1 GB file still gets a bounded audit that says which limits cut it', async () => {
    // GNU time writes the CLI's peak memory (its max resident set, in KB) to a file of its own
    const peak = join(home, 'peak-kb');
    const peakBytesOf = async () => Number((await readFile(peak, 'utf8')).trim().split('\n').at(-1)) * 1024;
    const timed = ['/usr/bin/time', '-f', '%M', '-o', peak];
    // the baseline: the same run and command line at a tiny size (the process with the bash parser's wasm compiled: on
    // Node 24 that compile alone peaks near 600 MB, docs/reliability-and-security.md), so the bound is on what the audit holds
    const small = 'truncate -s 1K big.bin && mkdir many && cd many && seq 1 3 | xargs touch && echo ok';
    const baseline = await runAct([{ toolCalls: [{ name: 'bash', input: { command: small } }] }, { text: 'done' }], timed);
    await rm(join(cwd, 'big.bin'));
    await rm(join(cwd, 'many'), { recursive: true });
    expect(baseline.run.code, baseline.run.stderr).toBe(0);
    const baselineBytes = await peakBytesOf();
    const started = Date.now();
    const { run } = await runAct(
      [
        {
          toolCalls: [
            {
              name: 'bash',
              input: { command: 'truncate -s 1G big.bin && mkdir many && cd many && seq 1 100000 | xargs touch && echo ok' },
            },
          ],
        },
        { text: 'done' },
      ],
      timed,
    );
    expect(run.code, run.stderr).toBe(0);
    const { audit } = oneValidObject(run.stdout);
    expect(audit.commands.items[0].exitCode).toBe(0);
    // bounded in memory: nothing near the 1 GB file's size was held, over what the same run with no files peaks at
    const peakBytes = await peakBytesOf();
    expect(baselineBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(peakBytes - baselineBytes).toBeLessThan(250 * 1024 * 1024);
    expect(audit.files.complete).toBe(false);
    // the 1 GB file is past the hash budget (compared by its stat); the walk stopped at its file budget, or its time
    expect(audit.files.cut).toContain('bytes');
    expect(audit.files.cut.some((cut: string) => cut === 'files' || cut === 'time')).toBe(true);
    expect(audit.files.created.items).toHaveLength(1000);
    expect(audit.files.created.items).toContain('big.bin');
    expect(audit.files.created.omitted).toBeGreaterThan(0);
    expect(audit.files.created.items.length + audit.files.created.omitted).toBeLessThanOrEqual(audit.files.budget.maxFiles);
    expect(run.stdout.length).toBeLessThan(200_000);
    // bounded in time: the end walk spends at most its budget (5 s), whatever the model left behind
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});

describe('the audit names what hides a change from git status and git diff', () => {
  it('the three tricks that hide a change from review, done by the model (skip-worktree, info/attributes -diff, info/exclude), are named in the JSON, the record and the job summary', async () => {
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
        cwd,
        env: { PATH: process.env.PATH, HOME: home },
      });
    git('init', '-q', '-b', 'main');
    await Promise.all([writeFile(join(cwd, 'tracked.txt'), 'one\n'), writeFile(join(cwd, 'diffed.txt'), 'one\n')]);
    git('add', '.');
    git('commit', '-qm', 'first');
    const tricks = [
      'git update-index --skip-worktree tracked.txt && echo two >> tracked.txt',
      "printf 'diffed.txt -diff\\n' > .git/info/attributes && echo two >> diffed.txt",
      'echo planted.txt >> .git/info/exclude && echo planted > planted.txt',
    ];
    const { run, summary } = await runAct([
      { toolCalls: tricks.map((command) => ({ name: 'bash', input: { command } })) },
      { text: 'done' },
    ]);
    expect(run.code, run.stderr).toBe(0);
    // none shows as a change in git status but diffed.txt, whose diff git now hides
    expect(git('status', '--porcelain').toString()).toBe(' M diffed.txt\n');
    const { audit } = oneValidObject(run.stdout);
    expect(audit.hidden).toEqual({
      index: { items: [{ path: 'tracked.txt', bits: ['skip-worktree'], setBy: 'run' }], omitted: 0 },
      files: {
        items: [
          { path: '.git/info/attributes', change: 'created' },
          { path: '.git/info/exclude', change: 'changed' },
        ],
        omitted: 0,
      },
      unread: null,
    });
    // the audit's own walk saw every change
    expect(audit.files.changed.items).toEqual(['diffed.txt', 'tracked.txt']);
    expect(audit.files.created.items).toEqual(['planted.txt']);
    expect(JSON.parse(await readFile(join(oneValidObject(run.stdout).record, 'audit.json'), 'utf8')).hidden).toEqual(audit.hidden);
    const markdown = await readFile(summary, 'utf8');
    expect(markdown).toContain(
      '### Hidden from review (3)\n\n```text\nskip-worktree: tracked.txt (set during the run)\ncreated: .git/info/attributes\nchanged: .git/info/exclude\n```',
    );
    expect(run.stderr).toContain(
      '::warning title=bhrain act%3A 3 change(s) hidden from review::git status and git diff do not show: skip-worktree: tracked.txt (set during the run); created: .git/info/attributes; changed: .git/info/exclude\n',
    );
  });
});

// what a run says and where: stdout carries the answer alone in text mode; stderr says how the run ended in the words
// of the JSON's termination, why a tool call failed, and why an early stop left the answer partial
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';

const { standin } = useStandin();
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home: tempDir('bhrain-home-') }, overrides);

describe('text mode: stdout carries the answer alone', () => {
  it('a max-iterations stop with no answer prints nothing on stdout, exits 3, and says why on stderr, even with --quiet', async () => {
    const cwd = tempDir('bhrain-answer-');
    const glob = { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] };
    standin().script(glob, glob);
    const outputFile = join(cwd, 'answer.md');
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--max-iterations', '2', '--output-file', outputFile, 'look around'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(await readFile(outputFile, 'utf8')).toBe('');
    expect(run.stderr).toMatch(
      /^bhrain act: stopped after 2 iterations, before the task was complete\. Nothing was answered: stdout is empty\. Continue from its series \(--continue, or --on-series\), or allow more iterations \(--max-iterations\)\.$/m,
    );
    expect(run.stderr).not.toMatch(/answer above/);

    standin().script(glob, glob);
    const quiet = await runBhrain({ args: ['act', '--atom', 'qwen', '--max-iterations', '2', '-q', 'look around'], cwd, env: envFor() });
    expect(quiet.code).toBe(3);
    expect(quiet.stdout).toBe('');
    expect(quiet.stderr).toMatch(/^bhrain act: stopped after 2 iterations, before the task was complete\. Nothing was answered/);
  });

  it('a max-iterations stop with some text prints that text alone on stdout; stderr says it is partial', async () => {
    const cwd = tempDir('bhrain-answer-');
    standin().script({ text: 'halfway there', toolCalls: [{ name: 'glob', input: { pattern: '*' } }] });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--max-iterations', '1', 'look around'], cwd, env: envFor() });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('halfway there\n');
    expect(run.stderr).toMatch(/^bhrain act: stopped after 1 iteration, before the task was complete\. The answer on stdout is partial\./m);
  });

  it('a budget stop prints nothing of bhrain on stdout, exits 6, and says "budget reached" with the budget on stderr', async () => {
    const cwd = tempDir('bhrain-answer-');
    standin().script({ text: 'first steps', toolCalls: [{ name: 'glob', input: { pattern: '*' } }] });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--max-tokens', '10', 'look around'], cwd, env: envFor() });
    expect(run.code).toBe(6);
    expect(run.stdout).toBe('first steps\n');
    expect(run.stderr).toMatch(
      /^bhrain act: budget reached after 1 iteration, before the task was complete: the token budget was reached: \d+ tokens spent .* of a cap of 10 \(--max-tokens, limits\.maxTokens\)\. The answer on stdout is partial\. .*raise the limit\.$/m,
    );
    // said once, at the end: not also as a warning
    expect(run.stderr).not.toMatch(/warning: session stopped/);
  });
});

describe('the status line says what the JSON termination says, in words', () => {
  it('a one-turn run: "complete after 1 iteration", singular, and the same termination in -o json', async () => {
    const cwd = tempDir('bhrain-status-');
    standin().script({ text: 'hello' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', 'say hello'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('hello\n');
    expect(run.stderr).toMatch(/^complete after 1 iteration$/m);
    expect(run.stderr).not.toMatch(/\b1 iterations\b/);

    standin().script({ text: 'hello' });
    const json = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'json', 'say hello'], cwd, env: envFor() });
    expect(JSON.parse(json.stdout).termination).toBe('complete');
    expect(json.stderr).toMatch(/^complete after 1 iteration$/m);
  });

  it('Ctrl-C while the model is answering: exit 130, stderr says "interrupted" as the JSON does, never "error" as the status', async () => {
    const cwd = tempDir('bhrain-status-');
    // the stand-in holds the answer open until the client goes away
    standin().script({ stall: 'text' });
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'ask', '--atom', 'qwen', '-o', 'json', 'take your time'], {
      cwd,
      env: envFor() as NodeJS.ProcessEnv,
    });
    // nothing on stdin: the run does not wait for a pipe
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const until = Date.now() + 15_000;
    while (standin().requests.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(standin().requests).toHaveLength(1);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(JSON.parse(stdout)).toMatchObject({ termination: 'interrupted', exitCode: 130 });
    expect(stderr).toMatch(/^interrupted( after \d+ iterations?)?$/m);
    expect(stderr).not.toMatch(/session error|failed after/);
  });

  it('Ctrl-C with -o stream-json: the SessionCompleted line says "interrupted", as the result line after it does', async () => {
    const cwd = tempDir('bhrain-status-');
    standin().script({ stall: 'text' });
    const child = spawn(
      process.execPath,
      [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'ask', '--atom', 'qwen', '-o', 'stream-json', 'take your time'],
      {
        cwd,
        env: envFor() as NodeJS.ProcessEnv,
      },
    );
    child.stdin.end();
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const until = Date.now() + 15_000;
    while (standin().requests.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGINT');
    expect(await new Promise<number | null>((resolve) => child.on('close', resolve))).toBe(130);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type?: string; termination?: string });
    expect(lines.find((line) => line.type === 'SessionCompleted')?.termination).toBe('interrupted');
    expect(lines.at(-1)?.termination).toBe('interrupted');
  });
});

describe('a failed tool call shows why in the progress line', () => {
  it('an unknown tool and a failing command each show their reason, one short line, redacted', async () => {
    const secret = 'ghs_failedCallS3cr3tV4lu3';
    const cwd = tempDir('bhrain-failed-');
    standin().script(
      { toolCalls: [{ name: `no_such_tool_${secret}`, input: {} }] },
      { toolCalls: [{ name: 'bash', input: { command: 'echo partial; exit 3' } }] },
      { text: 'done' },
    );
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--sandbox', 'off', 'try things'],
      cwd,
      env: envFor({ DEPLOY_TOKEN: secret }),
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^ {2}✗ no_such_tool_\S+ failed: tool not found: '[^']+'\. Available tools: .{1,80}… \(\d+ ms\)$/m);
    expect(run.stderr).toMatch(/^ {2}✗ bash failed: exit code: 3 \(\d+ ms\)$/m);
    expect(run.stderr).not.toContain(secret);
  });
});

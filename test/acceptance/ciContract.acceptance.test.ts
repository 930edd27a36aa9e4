// the CI and pipe contract, proved through the built CLI as a child process against the stand-in
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { expectValidOutput, oneValidObject } from './outputSchema.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-ci-home-');
  cwd = tempDir('bhrain-ci-cwd-');
});
afterEach(async () => {
  await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
});
const envFor = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);
const sentText = (index: number) => JSON.stringify(standin().requests[index].body);

describe('piped stdin is context for the prompt', () => {
  it('a pipe plus --input sends both: the instruction, then the piped text in a <stdin> block', async () => {
    standin().script({ text: 'looks fine' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--input', 'review this diff'],
      cwd,
      env: envFor(),
      stdin: 'diff --git a/x b/x\n+added line\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('looks fine\n');
    expect(sentText(0)).toContain('review this diff\\n\\n<stdin>\\ndiff --git a/x b/x\\n+added line\\n</stdin>');
  });

  it('a positional prompt works like --input, and piped stdin joins it', async () => {
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', 'summarize', 'this'], cwd, env: envFor(), stdin: 'some notes' });
    expect(run.code).toBe(0);
    expect(sentText(0)).toContain('summarize this\\n\\n<stdin>\\nsome notes\\n</stdin>');
  });

  it('a prompt given twice (argument and --input) is exit 2, saying so', async () => {
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--input', 'a', 'b'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the task was given twice/);
    expect(standin().requests).toHaveLength(0);
  });

  it('an open pipe that never writes does not hang a run with a prompt: it goes on after 3 s and says so', async () => {
    standin().script({ text: 'done' });
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'ask', '--atom', 'qwen', 'hello'], {
      cwd,
      env: envFor() as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.destroy();
    expect(code).toBe(0);
    expect(stdout).toBe('done\n');
    expect(stderr).toMatch(/nothing arrived on stdin within 3 s: going on without it/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('--output json is one versioned object, always', () => {
  it('a usage error (--atom nope) prints one JSON object valid against schemas/output.schema.json, exit 2', async () => {
    const run = await runBhrain({ args: ['ask', '--atom', 'nope', '--output', 'json', 'hi'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    const json = oneValidObject(run.stdout);
    expect(json).toMatchObject({ schemaVersion: 1, termination: 'usage', exitCode: 2, error: { code: 'BAD_REQUEST' } });
    expect(json.error.message).toMatch(/unknown atom 'nope'/);
  });

  it('an unknown flag with -o json prints one JSON object too, exit 2', async () => {
    const run = await runBhrain({ args: ['ask', '-o', 'json', '--nope'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(oneValidObject(run.stdout)).toMatchObject({
      termination: 'usage',
      error: { message: expect.stringMatching(/unknown option '--nope'/) },
    });
  });

  it('a missing key (auth failure) prints one JSON object, exit 4', async () => {
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude', '-o', 'json', 'hi'],
      cwd,
      env: envFor({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: undefined }),
    });
    expect(run.code).toBe(4);
    expect(oneValidObject(run.stdout)).toMatchObject({ exitCode: 4, termination: 'error', error: { code: 'AUTH_FAILED' } });
  });

  it('a complete run prints one valid object with the answer, refs, metrics and tool-call counts', async () => {
    await writeFile(join(cwd, 'notes.md'), 'hello\n');
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'notes.md' } }] }, { text: 'it says hello' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'json', 'what does notes.md say?'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    const json = oneValidObject(run.stdout);
    expect(json).toMatchObject({
      output: 'it says hello',
      termination: 'complete',
      exitCode: 0,
      toolCalls: { made: 1, failed: 0, denied: 0 },
    });
    expect(run.stderr.match(/^episode: /gm)).toHaveLength(1);
    expect(run.stderr.match(/^series: /gm)).toHaveLength(1);
  });
});

describe('a denied call is visible, and --fail-on-denied makes it an exit code', () => {
  it('a denied write shows in the JSON (count, tool, reason); the run completes with exit 0', async () => {
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'out.txt', content: 'x' } }] }, { text: 'could not write' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--permission', 'readOnly', '-o', 'json', 'write out.txt'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    const json = oneValidObject(run.stdout);
    expect(json.toolCalls).toMatchObject({ made: 1, denied: 1, denials: [{ tool: 'write', by: 'guard', reason: expect.any(String) }] });
  });

  it('with --fail-on-denied the same run exits 7, and says why on stderr', async () => {
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'out.txt', content: 'x' } }] }, { text: 'could not write' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--permission', 'readOnly', '--fail-on-denied', 'write out.txt'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(7);
    expect(run.stdout).toBe('could not write\n');
    expect(run.stderr).toMatch(/1 tool call\(s\) were denied, and --fail-on-denied was given/);
  });
});

describe('a finished answer is never lost', () => {
  it('an unwritable ref store (BHRAIN_HOME under a regular file): the answer on stdout, exit 5, the failure on stderr', async () => {
    const file = join(home, 'a-file');
    await writeFile(file, 'not a directory');
    standin().script({ text: 'the paid-for answer' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--no-record', 'hi'],
      cwd,
      env: envFor({ BHRAIN_HOME: join(file, 'home') }),
    });
    expect(run.stdout).toBe('the paid-for answer\n');
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/the refs could not be saved/);
  });
});

describe('conventions', () => {
  it('--version and -V print the package version, exit 0', async () => {
    const version = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')).version;
    for (const args of [['--version'], ['-V'], ['ask', '--version']]) {
      const run = await runBhrain({ args, cwd, env: envFor() });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
    }
  });

  it('an error is printed once on stderr', async () => {
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude', 'hi'],
      cwd,
      env: envFor({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: undefined }),
    });
    expect(run.code).toBe(4);
    expect(run.stderr.match(/no API key/g)).toHaveLength(1);
  });
});

describe('--output stream-json', () => {
  it('writes one JSON event per line as they happen, ending with the result object', async () => {
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'sleep 1; echo slept' } }] }, { text: 'all done' });
    const child = spawn(
      process.execPath,
      [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'act', '--atom', 'qwen', '-o', 'stream-json', 'sleep a bit'],
      {
        cwd,
        env: envFor() as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let running = true;
    void exited.then(() => (running = false));
    const events: Array<{ type: string; live: boolean }> = [];
    const lines: unknown[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      const event = JSON.parse(line);
      lines.push(event);
      events.push({ type: event.type, live: running });
    }
    expect(await exited).toBe(0);
    expect(events[0]).toMatchObject({ type: 'start' });
    // the tool call was seen while the run was still going (bash sleeps 1 s after it)
    expect(events.find((event) => event.type === 'ToolCallStarted')).toMatchObject({ live: true });
    const result = lines.at(-1);
    expectValidOutput(result);
    expect(result).toMatchObject({ type: 'result', output: 'all done', exitCode: 0 });
  });
});

describe('--json-schema', () => {
  const schema = JSON.stringify({
    type: 'object',
    required: ['files'],
    properties: { files: { type: 'array', items: { type: 'string' } } },
  });

  it('an answer that does not validate is retried once with the error, then the validated object is the JSON output', async () => {
    standin().script({ text: 'the loop is in runLoop.ts' }, { text: '{"files":["src/loop/runLoop.ts"]}' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--json-schema', schema, '-o', 'json', 'which files define the loop?'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(oneValidObject(run.stdout)).toMatchObject({ output: { files: ['src/loop/runLoop.ts'] }, exitCode: 0 });
    expect(standin().requests).toHaveLength(2);
  });

  it('two answers that do not validate: exit 8', async () => {
    standin().script({ text: 'no' }, { text: 'still no' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--json-schema', schema, 'which files?'], cwd, env: envFor() });
    expect(run.code).toBe(8);
  });
});

describe('budgets', () => {
  it('--max-tokens stops a model that calls tools forever after a bounded number of requests, exit 6, refs saved', async () => {
    standin().respond = () => ({ toolCalls: [{ name: 'glob', input: { pattern: `*.${Math.random().toString(36).slice(2)}` } }] });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--max-tokens', '5000', '-o', 'json', 'loop forever'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(6);
    const json = oneValidObject(run.stdout);
    expect(json).toMatchObject({ termination: 'budget', exitCode: 6, series: { hash: expect.any(String) } });
    expect(standin().requests.length).toBeLessThan(20);
    expect(standin().requests.length).toBeGreaterThan(1);
  });
});

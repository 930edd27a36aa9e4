// conventions: the flags of the Flags table (docs/cli-reference.md), proved through the built CLI as a child process against the stand-in

import { beforeEach, describe, expect, it } from 'vitest';

import type { StandinTurn } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-conventions-home-');
  cwd = tempDir('bhrain-conventions-cwd-');
});
const envFor = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);

/** a port nothing listens on: an env var pointing here would fail any request sent to it */
const DEAD_URL = 'http://127.0.0.1:9';

/** .what = stdout as exactly one JSON object, or a failed expectation */
const oneObject = (stdout: string) => {
  const lines = stdout.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
};

/** .what = the stderr lines that are warnings */
const warningLines = (stderr: string) => stderr.split('\n').filter((line) => /warning: /.test(line));

/** .what = a model that never stops calling tools: each turn a fresh tool call, so nothing looks like a repeat */
const callToolsForever = (turn: () => StandinTurn) => {
  standin().respond = turn;
};

/** .what = a glob call with a pattern that matches nothing, different every time */
const freshGlob = (): StandinTurn => ({ toolCalls: [{ name: 'glob', input: { pattern: `*.${Math.random().toString(36).slice(2)}` } }] });

/** .what = whether a text holds an ANSI escape sequence */
const hasAnsi = (text: string) => text.includes('\x1b[');

/** .what = a text without its ANSI colour sequences */
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

describe('conventions: -m/--model <id>', () => {
  it('conventions: a known id (--atom claude --model claude-haiku-4-5) reaches the stand-in as the model, with no warning', async () => {
    const known = 'claude-haiku-4-5';
    standin().script({ text: 'hi back' });
    const run = await runBhrain({ args: ['ask', '--atom', 'claude', '--model', known, 'hi'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('hi back\n');
    expect(standin().requests).toHaveLength(1);
    expect(standin().requests[0].protocol).toBe('anthropic');
    expect(standin().requests[0].body.model).toBe(known);
    expect(warningLines(run.stderr)).toEqual([]);
  });

  it('conventions: an unknown id (--atom qwen --model my-local-model) reaches the stand-in, is warned about once, and its cost is null', async () => {
    standin().script({ text: 'local answer' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--model', 'my-local-model', '-o', 'json', 'hi'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(standin().requests).toHaveLength(1);
    expect(standin().requests[0].protocol).toBe('openai');
    expect(standin().requests[0].body.model).toBe('my-local-model');
    const warnings = warningLines(run.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('my-local-model');
    const json = oneObject(run.stdout);
    expect(json).toMatchObject({ output: 'local answer', exitCode: 0, metrics: { cost: { usd: null } } });
    expect(json.warnings).toHaveLength(1);
    expect(json.warnings[0]).toContain('my-local-model');
  });
});

describe('conventions: --max-budget-usd', () => {
  it('conventions: with a model of unknown price it is exit 2 before any request, naming --max-budget-usd', async () => {
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--model', 'my-local-model', '--max-budget-usd', '1', 'hi'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--max-budget-usd/);
    expect(standin().requests).toHaveLength(0);
  });

  it('conventions: with a known model and a tiny cap, a model that calls tools forever stops after a bounded number of requests, exit 6', async () => {
    callToolsForever(freshGlob);
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--max-budget-usd', '0.000001', '-o', 'json', 'loop forever'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(6);
    const json = oneObject(run.stdout);
    expect(json).toMatchObject({ termination: 'budget', exitCode: 6 });
    expect(json.metrics.cost.usd).toBeGreaterThan(0.000001);
    expect(standin().requests.length).toBeGreaterThanOrEqual(1);
    expect(standin().requests.length).toBeLessThanOrEqual(3);
  });
});

describe('conventions: --max-wall-time', () => {
  it('conventions: --max-wall-time 1500ms stops a model that calls a slow tool forever, exit 6, well before 10 s', async () => {
    callToolsForever(() => ({
      toolCalls: [{ name: 'bash', input: { command: `sleep 0.3; echo ${Math.random().toString(36).slice(2)}` } }],
    }));
    const started = Date.now();
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--sandbox', 'off', '--max-wall-time', '1500ms', '-o', 'json', 'loop forever'],
      cwd,
      env: envFor(),
    });
    const elapsedMs = Date.now() - started;
    expect(run.code).toBe(6);
    expect(oneObject(run.stdout)).toMatchObject({ termination: 'budget', exitCode: 6 });
    expect(elapsedMs).toBeLessThan(10_000);
    expect(standin().requests.length).toBeGreaterThanOrEqual(1);
    expect(standin().requests.length).toBeLessThan(20);
  });

  it('conventions: a value that is not a duration (--max-wall-time soon) is exit 2, naming the flag', async () => {
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--max-wall-time', 'soon', 'hi'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--max-wall-time/);
    expect(standin().requests).toHaveLength(0);
  });
});

describe('conventions: --base-url', () => {
  it('conventions: --base-url beats QWEN_BASE_URL (qwen, with /v1)', async () => {
    standin().script({ text: 'via the flag' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--base-url', standin().openaiUrl, 'hi'],
      cwd,
      env: envFor({ QWEN_BASE_URL: `${DEAD_URL}/v1` }),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('via the flag\n');
    expect(standin().requests).toHaveLength(1);
    expect(standin().requests[0].protocol).toBe('openai');
  });

  it('conventions: --base-url beats ANTHROPIC_BASE_URL, and claude takes the url with or without /v1 (and a trailing slash)', async () => {
    for (const url of [standin().url, `${standin().url}/v1`, `${standin().url}/v1/`, `${standin().url}/`]) {
      standin().reset();
      standin().script({ text: 'via the flag' });
      const run = await runBhrain({
        args: ['ask', '--atom', 'claude/haiku', '--base-url', url, 'hi'],
        cwd,
        env: envFor({ ANTHROPIC_BASE_URL: DEAD_URL }),
      });
      expect({ url, code: run.code, stdout: run.stdout }).toEqual({ url, code: 0, stdout: 'via the flag\n' });
      expect(standin().requests).toHaveLength(1);
      expect(standin().requests[0].path).toBe('/v1/messages');
    }
  });

  it('conventions: a value that is not an http(s) URL is exit 2, naming --base-url', async () => {
    for (const url of ['ftp://127.0.0.1/v1', 'localhost:8000']) {
      const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--base-url', url, 'hi'], cwd, env: envFor() });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--base-url/);
    }
    expect(standin().requests).toHaveLength(0);
  });
});

describe('conventions: ANTHROPIC_AUTH_TOKEN', () => {
  it('conventions: with only ANTHROPIC_AUTH_TOKEN set, the request carries Authorization: Bearer <token>', async () => {
    standin().script({ text: 'through the gateway' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude/haiku', 'hi'],
      cwd,
      env: envFor({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: 'gateway-token-123' }),
    });
    expect(run.code).toBe(0);
    expect(standin().requests[0].headers.authorization).toBe('Bearer gateway-token-123');
    expect(warningLines(run.stderr)).toEqual([]);
  });

  it('conventions: with both the token and the key set, the token wins and stderr warns once', async () => {
    standin().script({ toolCalls: [{ name: 'glob', input: { pattern: '*.md' } }] }, { text: 'through the gateway' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude/haiku', 'hi'],
      cwd,
      env: envFor({ ANTHROPIC_API_KEY: 'sk-ant-not-this-one', ANTHROPIC_AUTH_TOKEN: 'gateway-token-123' }),
    });
    expect(run.code).toBe(0);
    expect(standin().requests).toHaveLength(2);
    for (const request of standin().requests) expect(request.headers.authorization).toBe('Bearer gateway-token-123');
    const warnings = warningLines(run.stderr);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are both set/);
  });
});

describe('conventions: --include-partial', () => {
  it('conventions: with -o stream-json, TextDelta lines come before the result and concatenate to the answer', async () => {
    const answer = 'the retry policy is defined in src/atoms/withRetry.ts, with its defaults in src/atoms/constants.ts';
    standin().script({ text: answer });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '-o', 'stream-json', '--include-partial', 'where is the retry policy?'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const resultAt = events.findIndex((event) => event.type === 'result');
    expect(resultAt).toBe(events.length - 1);
    expect(events[resultAt]).toMatchObject({ output: answer, exitCode: 0 });
    const deltas = events.map((event, index) => ({ event, index })).filter(({ event }) => event.type === 'TextDelta');
    expect(deltas.length).toBeGreaterThan(1);
    for (const { index } of deltas) expect(index).toBeLessThan(resultAt);
    expect(deltas.map(({ event }) => event.text).join('')).toBe(answer);
  });

  it('conventions: --include-partial without -o stream-json is exit 2, saying so', async () => {
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'json', '--include-partial', 'hi'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--include-partial needs --output stream-json/);
    expect(standin().requests).toHaveLength(0);
  });
});

describe('conventions: short flags', () => {
  it('conventions: -a qwen -i "task" -o json -q works like the long flags: exit 0, one JSON object, stderr empty', async () => {
    standin().script({ text: 'short and sweet' });
    const run = await runBhrain({ args: ['ask', '-a', 'qwen', '-i', 'say something', '-o', 'json', '-q'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(oneObject(run.stdout)).toMatchObject({
      atom: 'qwen/qwen3-coder-plus',
      output: 'short and sweet',
      termination: 'complete',
      exitCode: 0,
    });
    expect(run.stderr).toBe('');
    expect(JSON.stringify(standin().requests[0].body)).toContain('say something');
  });
});

describe('conventions: colour on stderr', () => {
  /** .what = one run with a tool call, so stderr has progress lines (a tool call, iterations) and a warning to colour */
  const runWithProgress = async (overrides: Record<string, string | undefined>) => {
    standin().script({ toolCalls: [{ name: 'glob', input: { pattern: '*.md' } }] }, { text: 'none found' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--model', 'my-local-model', 'list the markdown files'],
      cwd,
      env: envFor(overrides),
    });
    expect(run.code).toBe(0);
    expect(stripAnsi(run.stderr)).toMatch(/→ glob \*\.md\n/);
    expect(stripAnsi(run.stderr)).toMatch(/^iteration 1: /m);
    return run;
  };

  it('conventions: piped stderr (no TTY) has no ANSI escapes', async () => {
    const run = await runWithProgress({});
    expect(hasAnsi(run.stderr)).toBe(false);
  });

  it('conventions: FORCE_COLOR=1 forces colour on a pipe', async () => {
    const run = await runWithProgress({ FORCE_COLOR: '1' });
    expect(hasAnsi(run.stderr)).toBe(true);
  });

  it('conventions: NO_COLOR beats FORCE_COLOR: no ANSI escapes', async () => {
    const run = await runWithProgress({ FORCE_COLOR: '1', NO_COLOR: '1' });
    expect(hasAnsi(run.stderr)).toBe(false);
  });
});

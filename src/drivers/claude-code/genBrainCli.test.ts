import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { genClaudeCliWorld, plainScreen as plain, waitFor } from '#standin/genClaudeCliWorld.js';
import { useStandin } from '#standin/useStandin.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { CliExit } from './CliProcess.js';
import { genBrainCli, type BrainCli } from './genBrainCli.js';
import { exists, tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
const handles: BrainCli[] = [];
afterEach(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.executor.kill()));
});

const isAlive = (pid: number | null): boolean => {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** a handle over the real CLI in an isolated world that talks only to the stand-in */
const genCli = async (slug = 'claude/haiku') => {
  const { cwd, env } = await genClaudeCliWorld({ standinUrl: standin().url, makeDir: tempDir });
  const handle = genBrainCli({ slug }, { cwd, env });
  handles.push(handle);
  return { handle, cwd };
};
const toolNames = (index: number): string[] => (standin().requests[index].body.tools ?? []).map((tool: { name: string }) => tool.name);

describe('BrainCli over the real claude CLI', () => {
  it('a slug gives a handle that has spawned nothing; an unknown slug is a BadRequestError naming it', async () => {
    const { handle } = await genCli();
    expect(handle.pid).toBeNull();
    expect(handle.mode).toBeNull();
    expect(() => genBrainCli({ slug: 'claude/sonnett' }, { cwd: '/tmp' })).toThrow(BadRequestError);
    expect(() => genBrainCli({ slug: 'gemini' }, { cwd: '/tmp' })).toThrow(/unknown brain cli slug 'gemini'/);
  });

  it('boot spawns a headless process; booting again kills it, spawns anew, and keeps the series', async () => {
    const { handle } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    const first = handle.pid;
    expect(isAlive(first)).toBe(true);
    expect(handle.mode).toBe('dispatch');
    const series = handle.series;
    await handle.executor.boot({ mode: 'dispatch' });
    expect(isAlive(first)).toBe(false);
    expect(isAlive(handle.pid)).toBe(true);
    expect(handle.pid).not.toBe(first);
    expect(handle.series).toBe(series);
  });

  it('ask returns text, refs and per-call metrics, with read-only tools and nothing mutated', async () => {
    const { handle, cwd } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    standin().script(
      { toolCalls: [{ name: 'Write', input: { file_path: join(cwd, 'nope.txt'), content: 'x' } }] },
      { text: 'the repo has no files' },
    );
    const result = await handle.ask({ prompt: 'what files are in this repo?' });
    expect(result.output).toBe('the repo has no files');
    expect(result.metrics.size.tokens.input).toBeGreaterThan(0);
    expect(result.metrics.size.tokens.output).toBeGreaterThan(0);
    expect(result.episode.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(result.series.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(result.series.exid).toBe(handle.series);
    expect(result.metrics.cost.time.milliseconds).toBeGreaterThanOrEqual(0);
    expect(result.metrics.cost.cash === null || result.metrics.cost.cash.total >= 0).toBe(true);
    expect(toolNames(0).sort()).toEqual(['Glob', 'Grep', 'Read', 'WebFetch', 'WebSearch']);
    expect(await exists(join(cwd, 'nope.txt'))).toBe(false);
  });

  it('act has mutation tools and changes files; switching from ask resumes the same session', async () => {
    const { handle, cwd } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    standin().script({ text: 'planned: write hello.txt' });
    await handle.ask({ prompt: 'plan: create hello.txt' });
    const askPid = handle.pid;
    standin().script(
      { toolCalls: [{ name: 'Write', input: { file_path: join(cwd, 'hello.txt'), content: 'hello' } }] },
      { text: 'created hello.txt' },
    );
    const result = await handle.act({ prompt: 'create a file called hello.txt with "hello"' });
    expect(result.output).toBe('created hello.txt');
    expect(await readFile(join(cwd, 'hello.txt'), 'utf8')).toBe('hello');
    expect(handle.pid).not.toBe(askPid);
    expect(toolNames(1)).toEqual(expect.arrayContaining(['Edit', 'Write', 'Bash']));
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('plan: create hello.txt');
    expect(result.metrics.size.tokens.input).toBeGreaterThan(0);
    expect(result.episode.exchanges).toHaveLength(2);
  });

  it('ask and act throw before boot and in interact mode', async () => {
    const { handle } = await genCli();
    await expect(handle.ask({ prompt: 'x' })).rejects.toThrow(/dispatch mode.*executor\.boot/);
    await expect(handle.act({ prompt: 'x' })).rejects.toThrow(BadRequestError);
    await handle.executor.boot({ mode: 'interact' });
    await expect(handle.ask({ prompt: 'x' })).rejects.toThrow(/mode is interact/);
    await expect(handle.act({ prompt: 'x' })).rejects.toThrow(/mode is interact/);
  });

  it('dispatch streams output chunks as they arrive, and accepts raw protocol lines', async () => {
    const { handle } = await genCli();
    const chunks: string[] = [];
    handle.terminal.onData((chunk) => chunks.push(chunk));
    await handle.executor.boot({ mode: 'dispatch' });
    standin().script({ text: 'streamed answer' }, { text: 'raw answer' });
    await handle.ask({ prompt: 'stream please' });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toContain('streamed answer');
    handle.terminal.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'raw protocol line' } })}\n`);
    await waitFor(() => chunks.join('').includes('raw answer'));
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('raw protocol line');
  });
});

describe('BrainCli over the real claude CLI', () => {
  it('interact mode is a PTY: raw bytes out, keystrokes in, a clean exit reports code 0', async () => {
    const { handle } = await genCli();
    let screen = '';
    const exits: CliExit[] = [];
    handle.terminal.onData((chunk) => (screen += chunk));
    handle.terminal.onExit((exit) => exits.push(exit));
    await handle.executor.boot({ mode: 'interact' });
    expect(handle.mode).toBe('interact');
    await waitFor(() => screen.length > 100);
    expect(screen).toMatch(/\x1b\[/); // terminal escape sequences: raw PTY bytes
    standin().script({ text: 'hi from the tui' });
    handle.terminal.write('hello tui');
    await new Promise((resolve) => setTimeout(resolve, 300));
    handle.terminal.write('\r');
    await waitFor(
      () => standin().requests.length > 0,
      20_000,
      () => `screen: ${plain(screen).slice(-1500)}`,
    );
    expect(JSON.stringify(standin().requests[0].body.messages)).toContain('hello tui');
    await waitFor(
      () => plain(screen).replace(/\s/g, '').includes('hifromthetui'),
      20_000,
      () => `screen: ${plain(screen).slice(-1500)}`,
    );
    handle.terminal.write('/exit');
    await new Promise((resolve) => setTimeout(resolve, 300));
    handle.terminal.write('\r');
    await waitFor(
      () => exits.length > 0,
      20_000,
      () => `screen: ${plain(screen).slice(-1500)}`,
    );
    expect(exits).toEqual([{ code: 0, signal: null }]);
    expect(handle.pid).toBeNull();
  }, 60_000);

  it('killed externally or by kill(), onExit fires exactly once; kill with nothing running is a no-op', async () => {
    const { handle } = await genCli();
    await handle.executor.kill();
    const exits: CliExit[] = [];
    handle.terminal.onExit((exit) => exits.push(exit));
    await handle.executor.boot({ mode: 'dispatch' });
    process.kill(handle.pid!, 'SIGTERM');
    await waitFor(() => exits.length === 1);
    // once ready, the CLI handles SIGTERM itself and exits 143 (128 + 15), as shells report a TERM'd process
    expect(exits[0].signal === 'SIGTERM' || exits[0].code === 143).toBe(true);
    await handle.executor.boot({ mode: 'dispatch' });
    const pid = handle.pid;
    await handle.executor.kill();
    expect(isAlive(pid)).toBe(false);
    expect(() => process.kill(-pid!, 0)).toThrow(/ESRCH/); // no process of its group is left behind
    await handle.executor.kill();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(exits).toHaveLength(2);
  });

  it('after a crash mid-series, booting again resumes the same series with its context', async () => {
    const { handle } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    standin().script({ text: 'noted: the launch code is 7319' });
    await handle.ask({ prompt: 'remember the launch code 7319' });
    const series = handle.series;
    const exits: CliExit[] = [];
    handle.terminal.onExit((exit) => exits.push(exit));
    process.kill(handle.pid!, 'SIGKILL');
    await waitFor(() => exits.length === 1);
    expect(exits[0].signal).toBe('SIGKILL');
    await handle.executor.boot({ mode: 'dispatch' });
    expect(handle.series).toBe(series);
    standin().script({ text: 'the launch code is 7319' });
    const result = await handle.ask({ prompt: 'what is the launch code?' });
    expect(result.output).toBe('the launch code is 7319');
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('remember the launch code 7319');
  });

  it('dispatch → interact → dispatch kills each prior process and keeps the series', async () => {
    const { handle } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    standin().script({ text: 'first' });
    await handle.ask({ prompt: 'the secret word is ostrich' });
    const series = handle.series;
    const dispatchPid = handle.pid;
    await handle.executor.boot({ mode: 'interact' });
    expect(handle.mode).toBe('interact');
    expect(isAlive(dispatchPid)).toBe(false);
    expect(handle.series).toBe(series);
    const interactPid = handle.pid;
    await new Promise((resolve) => setTimeout(resolve, 500));
    await handle.executor.boot({ mode: 'dispatch' });
    expect(handle.mode).toBe('dispatch');
    expect(isAlive(interactPid)).toBe(false);
    expect(handle.series).toBe(series);
    standin().script({ text: 'ostrich' });
    await handle.ask({ prompt: 'what was the word?' });
    expect(JSON.stringify(standin().requests.at(-1)!.body.messages)).toContain('the secret word is ostrich');
  });

  it('two sequential calls report independent, per-call metrics', async () => {
    const { handle } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    standin().script({ text: 'short', usage: { outputTokens: 7 } }, { text: 'also short', usage: { outputTokens: 11 } });
    const one = await handle.ask({ prompt: 'one' });
    const two = await handle.ask({ prompt: 'two' });
    expect(one.metrics.size.tokens.output).toBe(7);
    expect(two.metrics.size.tokens.output).toBe(11);
    expect(two.metrics.size.tokens.input + two.metrics.size.tokens.cache.get + two.metrics.size.tokens.cache.set).toBeGreaterThan(0);
  });
});

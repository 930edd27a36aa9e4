import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { genClaudeCliWorld, plainScreen as plain, waitFor } from '#standin/genClaudeCliWorld.js';
import { useStandin } from '#standin/useStandin.js';
import { AbortedError, BadRequestError } from '../../core/contract/errors.js';
import { signalGroup } from '../../process/signalGroup.js';
import { BrainCliError, BrainCliTimeoutError, genBrainCli, type BrainCli } from './genBrainCli.js';
import { resolveClaudeBinary } from './resolveClaudeBinary.js';
import { tempDir } from '#test-helpers/fs.js';

// BrainCli under bad input and faults, each case proven on the real Claude Code CLI
const { standin } = useStandin();
const require = createRequire(import.meta.url);
const PACKAGE_BINARY = join(dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'bin', 'claude.exe');
const handles: BrainCli[] = [];
const markers: string[] = [];
/** a bound on calls that should answer at once, so a hang fails with a BrainCliTimeoutError, not a test timeout */
const CALL_TIMEOUT_MS = 20_000;

/** the processes whose command line carries a marker, as ps lists them (not our own bookkeeping) */
const processesCarrying = (marker: string): Array<{ pid: number; args: string }> =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker))
    .map((line) => {
      const [, pid, args] = line.trim().match(/^(\d+)\s+(.*)$/)!;
      return { pid: Number(pid), args };
    });
const pidsCarrying = (marker: string): number[] => processesCarrying(marker).map((found) => found.pid);
/** whether a node process (not just the tool's shell, whose command line names both) carries the marker */
const nodeCarrying = (marker: string): boolean => processesCarrying(marker).some((found) => /^(\S*\/)?node\s/.test(found.args));

afterEach(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.executor.kill()));
  // a failing run must not leave its tool processes behind: kill them by pid, found by this run's unique marker
  for (const marker of markers.splice(0))
    for (const pid of pidsCarrying(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** the settled error of a promise that must reject, with how long it took */
const rejectionOf = async (promise: Promise<unknown>): Promise<{ error: Error; elapsedMs: number }> => {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error: error as Error, elapsedMs: Date.now() - started };
  }
  throw new Error('expected a rejection, but the promise resolved');
};

/** a handle over the real CLI (or the given executable) in an isolated world that talks only to the stand-in */
const genCli = async (options: { executable?: string } = {}) => {
  const { cwd, env } = await genClaudeCliWorld({ standinUrl: standin().url, makeDir: tempDir });
  const handle = genBrainCli({ slug: 'claude/haiku' }, { cwd, env, executable: options.executable });
  handles.push(handle);
  return { handle, cwd };
};

/** types a line into the interactive TUI the way a person does (text, a pause, Enter) and waits for the answer on screen */
const typeLine = async (input: { line: string; answer: string }, context: { handle: BrainCli; screen: () => string }) => {
  const before = standin().requests.length;
  context.handle.terminal.write(input.line);
  await sleep(300);
  context.handle.terminal.write('\r');
  const tail = () => `screen: ${plain(context.screen()).slice(-1500)}`;
  await waitFor(() => standin().requests.length > before, 20_000, tail);
  const squeezed = input.answer.replace(/\s/g, '');
  await waitFor(() => plain(context.screen()).replace(/\s/g, '').includes(squeezed), 20_000, tail);
};

describe('BrainCli under bad input and faults', () => {
  it('a missing cwd is a BadRequestError naming it, and no pid <= 1 is ever signalled', async () => {
    const kill = vi.spyOn(process, 'kill');
    try {
      // given a cwd that never existed, then construction refuses it
      const missing = join(tmpdir(), `bhrain-missing-cwd-${randomUUID()}`);
      expect(() => genBrainCli({ slug: 'claude/haiku' }, { cwd: missing })).toThrow(BadRequestError);
      expect(() => genBrainCli({ slug: 'claude/haiku' }, { cwd: missing })).toThrow(missing);

      // given a cwd removed after construction, then boot refuses it, names it, and leaves the handle unbooted
      const { handle, cwd } = await genCli();
      await rm(cwd, { recursive: true });
      for (const mode of ['dispatch', 'interact'] as const) {
        const { error } = await rejectionOf(handle.executor.boot({ mode }));
        expect(error).toBeInstanceOf(BadRequestError);
        expect(error.message).toContain(cwd);
        expect(handle.pid).toBeNull();
        expect(handle.mode).toBeNull();
        await handle.executor.kill();
      }

      // when the cwd is back, then a real boot and kill go through the same (wrapped) process.kill
      await mkdir(cwd);
      await handle.executor.boot({ mode: 'dispatch' });
      const pid = handle.pid!;
      expect(pid).toBeGreaterThan(1);
      await handle.executor.kill();
      expect(kill.mock.calls.some(([target]) => Math.abs(Number(target)) === pid)).toBe(true);

      // then no call ever targeted init, every process (-1), our own group (0 / -0), nor a non-number
      const unsafe = kill.mock.calls.filter(([target]) => !(Math.abs(Number(target)) > 1));
      expect(unsafe).toEqual([]);

      // then the one group-kill helper refuses a pid <= 1 itself (not calling through here: a broken guard would signal init)
      kill.mockClear();
      kill.mockImplementation(() => true);
      for (const target of [1, -1, 0, -0, NaN, 1.5, null]) signalGroup(target, 'SIGTERM');
      expect(kill).not.toHaveBeenCalled();
      signalGroup(4_000_000, 'SIGTERM');
      expect(kill).toHaveBeenCalledWith(-4_000_000, 'SIGTERM');
    } finally {
      kill.mockRestore();
    }
  }, 60_000);

  it('interact → dispatch → interact → dispatch keeps the series and answers with the earlier context', async () => {
    const { handle } = await genCli();
    let screen = '';
    handle.terminal.onData((chunk) => (screen += chunk));

    // given an interact leg that states a fact
    await handle.executor.boot({ mode: 'interact' });
    const series = handle.series;
    expect(series).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(() => screen.length > 100);
    standin().script({ text: 'noted the falcon' });
    await typeLine({ line: 'the falcon is named Rhea', answer: 'noted the falcon' }, { handle, screen: () => screen });

    // when a dispatch leg asks, then it resumes that session
    await handle.executor.boot({ mode: 'dispatch' });
    expect(handle.mode).toBe('dispatch');
    expect(handle.series).toBe(series);
    standin().script({ text: 'the falcon is Rhea' });
    const first = await handle.ask({ prompt: 'what is the falcon named?', timeoutMs: CALL_TIMEOUT_MS });
    expect(first.output).toBe('the falcon is Rhea');
    expect(JSON.stringify(standin().requests.at(-1)!.body.messages)).toContain('the falcon is named Rhea');

    // when a second interact leg states another fact
    await handle.executor.boot({ mode: 'interact' });
    expect(handle.mode).toBe('interact');
    expect(handle.series).toBe(series);
    screen = '';
    await waitFor(() => screen.length > 100);
    standin().script({ text: 'noted the heron' });
    await typeLine({ line: 'the heron is named Juno', answer: 'noted the heron' }, { handle, screen: () => screen });
    expect(JSON.stringify(standin().requests.at(-1)!.body.messages)).toContain('what is the falcon named?');

    // then the last dispatch leg sees every earlier turn of both modes, in one series
    await handle.executor.boot({ mode: 'dispatch' });
    expect(handle.series).toBe(series);
    standin().script({ text: 'Rhea and Juno' });
    const last = await handle.ask({ prompt: 'name both birds', timeoutMs: CALL_TIMEOUT_MS });
    expect(last.output).toBe('Rhea and Juno');
    expect(last.series.exid).toBe(series);
    const seen = JSON.stringify(standin().requests.at(-1)!.body.messages);
    for (const earlier of ['the falcon is named Rhea', 'what is the falcon named?', 'the heron is named Juno', 'name both birds'])
      expect(seen).toContain(earlier);
  }, 150_000);

  it('a stalled stand-in makes ask reject within its timeout (or on abort), and the next ask works', async () => {
    const { handle } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    const series = handle.series!;
    const pid = handle.pid;

    // given a stand-in that starts an answer and goes silent, when ask has a 3 s timeout, then it rejects in time
    standin().script({ stall: 'text' });
    const timedOut = await rejectionOf(handle.ask({ prompt: 'stall please', timeoutMs: 3_000 }));
    expect(timedOut.error).toBeInstanceOf(BrainCliTimeoutError);
    expect(timedOut.error).toBeInstanceOf(BrainCliError);
    expect(timedOut.error.message).toContain(series);
    expect(timedOut.error.message).toMatch(/3000|3 ?s/);
    expect(timedOut.elapsedMs).toBeGreaterThanOrEqual(2_900);
    expect(timedOut.elapsedMs).toBeLessThan(15_000);
    expect(JSON.stringify(standin().requests[0].body.messages)).toContain('stall please'); // the CLI did reach the stall

    // then the handle stays usable without a boot: the next ask answers with its own text
    expect(handle.mode).toBe('dispatch');
    standin().script({ text: 'back after the stall' });
    const recovered = await handle.ask({ prompt: 'are you there?', timeoutMs: CALL_TIMEOUT_MS });
    expect(recovered.output).toBe('back after the stall');
    expect(handle.series).toBe(series);
    expect(handle.pid).toBe(pid); // the CLI's own interrupt ended the turn: no reboot was needed

    // given a stall again, when the caller aborts after 1 s, then ask rejects with AbortedError, promptly
    standin().script({ stall: 'text' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1_000);
    const aborted = await rejectionOf(handle.ask({ prompt: 'stall again', signal: controller.signal }));
    expect(aborted.error).toBeInstanceOf(AbortedError);
    expect(aborted.elapsedMs).toBeGreaterThanOrEqual(900);
    expect(aborted.elapsedMs).toBeLessThan(15_000);

    // then the next ask works too
    expect(handle.mode).toBe('dispatch');
    standin().script({ text: 'back after the abort' });
    const again = await handle.ask({ prompt: 'still there?', timeoutMs: CALL_TIMEOUT_MS });
    expect(again.output).toBe('back after the abort');
    expect(handle.series).toBe(series);
  }, 90_000);
});

describe('BrainCli under bad input and faults', () => {
  it('a CLI that dies at start rejects boot with its exit code and stderr, and a later ask still says why', async () => {
    // given an executable that complains on stderr and exits 3
    const dir = tempDir('bhrain-dying-cli-');
    const executable = join(dir, 'claude');
    await writeFile(executable, '#!/bin/sh\necho "boom: bad config" >&2\nexit 3\n');
    await chmod(executable, 0o755);
    const { handle } = await genCli({ executable });

    // when booted, then boot rejects with the exit code and the stderr tail, and the handle is unbooted
    const { error } = await rejectionOf(handle.executor.boot({ mode: 'dispatch' }));
    expect(error).toBeInstanceOf(BrainCliError);
    expect(error.message).toMatch(/\b3\b/);
    expect(error.message).toContain('boom: bad config');
    expect(handle.pid).toBeNull();
    expect(handle.mode).toBeNull();

    // when asked a second later, then the error still says why: the CLI exited, with its stderr
    await sleep(1_000);
    const later = await rejectionOf(handle.ask({ prompt: 'anyone?' }));
    expect(later.error.message).toMatch(/exit/i);
    expect(later.error.message).toContain('boom: bad config');

    // when booted in interact, then its error reaches the screen but it never takes input: boot rejects with that screen
    const interact = await rejectionOf(handle.executor.boot({ mode: 'interact' }));
    expect(interact.error).toBeInstanceOf(BrainCliError);
    expect(interact.error.message).toContain('boom: bad config');
    expect(handle.pid).toBeNull();
    expect(handle.mode).toBeNull();
  }, 30_000);

  it('a CLI that never becomes ready is killed at the boot timeout, and boot rejects saying so', async () => {
    // given an executable that starts and then says nothing, ever
    const marker = `bhrain-marker-${randomUUID().slice(0, 8)}`;
    markers.push(marker);
    const dir = tempDir('bhrain-silent-cli-');
    const executable = join(dir, 'claude');
    await writeFile(executable, `#!/bin/sh\nnode -e "setInterval(()=>{},1000)" ${marker}\n`);
    await chmod(executable, 0o755);
    const { handle } = await genCli({ executable });

    // when booted with a 1 s timeout, then boot rejects in about that time, and nothing of it is left running
    const { error, elapsedMs } = await rejectionOf(handle.executor.boot({ mode: 'dispatch', timeoutMs: 1_000 }));
    expect(error).toBeInstanceOf(BrainCliError);
    expect(error.message).toMatch(/not ready within 1000 ms/);
    expect(elapsedMs).toBeGreaterThanOrEqual(900);
    expect(elapsedMs).toBeLessThan(8_000);
    expect(handle.pid).toBeNull();
    expect(handle.mode).toBeNull();
    await sleep(300);
    expect(processesCarrying(marker)).toEqual([]);
  }, 30_000);

  it('a claude on PATH is found when the package is absent; the package binary wins when present', async () => {
    const dir = tempDir('bhrain-path-claude-');
    const onPath = join(dir, 'claude');
    await symlink(PACKAGE_BINARY, onPath);
    const absent = (specifier: string): string => {
      throw new Error(`Cannot find module '${specifier}'`);
    };

    // given no package and a PATH with a claude on it, then that claude is found
    expect(resolveClaudeBinary({}, { env: { PATH: dir }, resolvePackage: absent })).toBe(onPath);

    // given an explicit executable that does not exist, then it is a BadRequestError naming it
    const nowhere = join(dir, 'no-such-claude');
    expect(() => resolveClaudeBinary({ executable: nowhere }, { env: { PATH: dir } })).toThrow(BadRequestError);
    expect(() => resolveClaudeBinary({ executable: nowhere }, { env: { PATH: dir } })).toThrow(nowhere);
    expect(() => resolveClaudeBinary({}, { env: { PATH: dir, CLAUDE_CODE_EXECUTABLE: nowhere } })).toThrow(nowhere);

    // given the package installed and a claude on PATH too, then the package's native binary wins
    expect(resolveClaudeBinary({}, { env: { PATH: dir } })).toBe(PACKAGE_BINARY);
  });

  it('no tool process is left after an external kill -9 of the CLI followed by kill()', async () => {
    const { handle } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });
    const marker = `bhrain-marker-${randomUUID().slice(0, 8)}`;
    markers.push(marker);
    const keepAlive = (name: string) => `node -e "setInterval(()=>{},1000)" ${name}`;

    // given an act whose Bash tool starts two long-lived processes
    standin().script(
      {
        toolCalls: [
          {
            name: 'Bash',
            input: { command: `${keepAlive(`${marker}-a`)} & ${keepAlive(`${marker}-b`)}`, description: 'keep two processes alive' },
          },
        ],
      },
      { text: 'started' },
    );
    const acting = rejectionOf(handle.act({ prompt: 'start two keep-alive processes' }));
    await waitFor(
      () => nodeCarrying(`${marker}-a`) && nodeCarrying(`${marker}-b`),
      30_000,
      () => `requests: ${standin().requests.length}; ps: ${JSON.stringify(processesCarrying(marker))}`,
    );

    // when the CLI is killed from outside with SIGKILL, then the act rejects
    process.kill(handle.pid!, 'SIGKILL');
    const { error } = await acting;
    expect(error).toBeInstanceOf(BrainCliError);
    // the tool processes outlived the CLI (their own session): what follows is kill()'s doing, not the SIGKILL's
    await sleep(500);
    expect(nodeCarrying(`${marker}-a`) && nodeCarrying(`${marker}-b`)).toBe(true);

    // when kill() is called on the handle, then no tool process is left
    await handle.executor.kill();
    await sleep(500); // signal delivery is asynchronous; a survivor would still be listed after this
    expect(processesCarrying(marker)).toEqual([]);
  }, 90_000);
});

describe('BrainCli under bad input and faults', () => {
  it('a raw write then an ask: the ask waits for the raw turn and resolves with its own answer', async () => {
    const { handle, cwd } = await genCli();
    await handle.executor.boot({ mode: 'dispatch' });

    // given a raw turn that is slow and runs a tool (a point where the CLI could fold a queued line into it), and an ask right behind it
    standin().script(
      { delayMs: 1_500, then: { toolCalls: [{ name: 'Glob', input: { pattern: '*', path: cwd } }] } },
      { text: 'raw answer' },
      { text: 'ask answer' },
    );
    handle.terminal.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'raw turn question' } })}\n`);
    const result = await handle.ask({ prompt: 'ask turn question', timeoutMs: CALL_TIMEOUT_MS });

    // then the ask gets its own answer, and its episode records the ask, not the raw turn
    expect(result.output).toBe('ask answer');
    expect(result.episode.exchanges.at(-1)!.input).toBe('ask turn question');
    expect(result.episode.exchanges.map((exchange) => exchange.output)).not.toContain('raw answer');
    // then the ask was written only after the raw turn had its answer: no request of the raw turn carries it
    const requests = standin().requests.map((request) => JSON.stringify(request.body.messages));
    expect(requests).toHaveLength(3);
    expect(requests.slice(0, 2).filter((messages) => messages.includes('ask turn question'))).toEqual([]);
    expect(requests[2]).toContain('raw answer');
    expect(requests[2]).toContain('ask turn question');
  }, 60_000);

  it('with partial messages, dispatch streams text deltas as stream_event lines before the result', async () => {
    const { handle } = await genCli();
    const chunks: string[] = [];
    handle.terminal.onData((chunk) => chunks.push(chunk));
    await handle.executor.boot({ mode: 'dispatch' });

    // given a long scripted answer, when asked
    const text = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');
    standin().script({ text });
    const result = await handle.ask({ prompt: 'say a lot', timeoutMs: CALL_TIMEOUT_MS });
    expect(result.output).toBe(text);

    // then a text_delta stream_event line arrives before the result line
    const events = chunks
      .join('')
      .split('\n')
      .filter((line) => line.trim().startsWith('{'))
      .map((line): { type?: string; event?: { type?: string; delta?: { type?: string } } } => {
        try {
          return JSON.parse(line);
        } catch {
          return {}; // not an event line
        }
      });
    const firstDelta = events.findIndex((event) => event.type === 'stream_event' && event.event?.delta?.type === 'text_delta');
    const resultAt = events.findIndex((event) => event.type === 'result');
    expect(firstDelta).toBeGreaterThanOrEqual(0);
    expect(resultAt).toBeGreaterThan(firstDelta);
    expect(events.filter((event) => event.type === 'stream_event' && event.event?.delta?.type === 'text_delta').length).toBeGreaterThan(1);
  }, 60_000);
});

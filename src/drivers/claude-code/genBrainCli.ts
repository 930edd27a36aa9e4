import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { CLAUDE_DEFAULT, CLAUDE_MODELS, type BrainModelEntry } from '../../providers/models.js';
import { appendBrainExchange, type BrainEpisode } from '../../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../../core/contract/BrainExchange.js';
import type { BrainOutput } from '../../core/contract/BrainOutput.js';
import { genBrainSeries, type BrainSeries } from '../../core/contract/BrainSeries.js';
import { AbortedError, BadRequestError, BhrainError } from '../../core/contract/errors.js';
import { killTagged } from '../../sandbox/process/killTagged.js';
import { CLI_TAG_ENV, spawnPiped, spawnPty, type CliExit, type CliProcess } from './CliProcess.js';
import { readResultMetrics, type ClaudeResultEvent } from './readResultEvent.js';
import { resolveClaudeBinary } from './resolveClaudeBinary.js';

/** tools ask allows: they read and search, and change nothing */
export const CLAUDE_READ_TOOLS = ['Read', 'Grep', 'Glob', 'WebSearch', 'WebFetch'] as const;
/** tools act allows on top: edits, writes and shell commands */
export const CLAUDE_WRITE_TOOLS = ['Edit', 'Write', 'Bash'] as const;

/** .what = the claude CLI answered a call with an error result, died before answering, or never became ready */
export class BrainCliError extends BhrainError {
  readonly code: string = 'BRAIN_CLI';
}

/** .what = an ask or act ran past its timeoutMs; the CLI's turn was interrupted and the handle is usable again */
export class BrainCliTimeoutError extends BrainCliError {
  override readonly code = 'BRAIN_CLI_TIMEOUT';
  constructor(
    message: string,
    readonly series: string | null,
    readonly timeoutMs: number,
  ) {
    super(message);
  }
}

/** how long an ask or act may run when the caller sets no timeoutMs: a long act, not a hung endpoint */
export const BRAIN_CLI_CALL_TIMEOUT_MS = 600_000;
/** how long a boot may take, unless boot({ timeoutMs }) says otherwise, before the CLI counts as hung at start-up */
const BOOT_TIMEOUT_MS = 30_000;
/** the escape that turns bracketed paste on: the interactive TUI sends it when its prompt is ready for input */
const TUI_READY = '\x1b[?2004h';
/** how long an interrupted turn has to end before the process is rebooted instead */
const INTERRUPT_GRACE_MS = 5_000;

type Toolset = 'ask' | 'act';
type Mode = 'dispatch' | 'interact';
/** one turn the CLI will answer with a result event, in order: a call of ours, or a raw line the caller wrote */
type Turn = { kind: 'raw' } | { kind: 'call'; resolve: (event: ClaudeResultEvent) => void; reject: (error: Error) => void };

/** .what = the model entry behind a claude slug; an unknown slug is a BadRequestError naming it */
const resolveSlug = (slug: string): { slug: string; entry: BrainModelEntry } => {
  const [supplier, model, ...extra] = slug.split('/');
  const name = (model ?? CLAUDE_DEFAULT) as keyof typeof CLAUDE_MODELS;
  if (supplier !== 'claude' || extra.length || !CLAUDE_MODELS[name])
    throw new BadRequestError(
      `unknown brain cli slug '${slug}': choose one of claude, ${Object.keys(CLAUDE_MODELS)
        .map((key) => `claude/${key}`)
        .join(', ')}`,
    );
  return { slug: `claude/${name}`, entry: CLAUDE_MODELS[name] };
};

/** .what = a cwd that is not an existing directory is a BadRequestError naming it, before anything is spawned */
const assertDirectory = (cwd: string) => {
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    // missing: reported below
  }
  if (!isDirectory) throw new BadRequestError(`the cwd for the claude CLI is not an existing directory: ${cwd}`);
};

/**
 * .what = whether the CLI has saved a transcript for this session id, in any project dir
 * .why = the CLI saves a session at its first message, whichever mode sent it (a PTY's messages are not seen by bhrain);
 *        a saved one must be resumed (--session-id would be "already in use"), an unsaved one created (--resume fails)
 */
const hasSavedSession = (series: string, env: NodeJS.ProcessEnv): boolean => {
  const projects = join(env.CLAUDE_CONFIG_DIR ?? join(env.HOME ?? homedir(), '.claude'), 'projects');
  try {
    return readdirSync(projects).some((dir) => existsSync(join(projects, dir, `${series}.jsonl`)));
  } catch {
    return false;
  }
};

/** .what = the last lines of a process's output, without terminal escapes, for an error message */
const tailOf = (text: string): string =>
  text
    .replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()78][0-9A-Za-z]?/g, '')
    .trim()
    .slice(-500);

/**
 * .what = a handle over the real Claude Code CLI: boot it headless (dispatch: stream-json, ask/act) or in a PTY
 *         (interact: raw bytes), with one series (the CLI's session id) that survives reboots, mode switches and crashes
 * .why = drive Claude Code as a brain: per-call metrics and refs in dispatch, a real terminal in interact
 * .note = constructing spawns nothing (pid and mode stay null until boot)
 */
export const genBrainCli = (
  input: { slug: string },
  context: { cwd: string; env?: Record<string, string | undefined>; executable?: string },
) => {
  const { slug, entry } = resolveSlug(input.slug);
  assertDirectory(context.cwd);
  // every process the CLI starts inherits the tag, so a sweep finds what a crashed CLI left behind
  const tag = randomUUID();
  const env = { ...(context.env ?? process.env), [CLI_TAG_ENV]: tag } as NodeJS.ProcessEnv;
  const dataListeners = new Set<(chunk: string) => void>();
  const exitListeners = new Set<(exit: CliExit) => void>();
  let proc: CliProcess | null = null;
  let mode: Mode | null = null;
  let toolset: Toolset | null = null;
  let series: string | null = null;
  let everBooted = false;
  let lastExit: string | null = null;
  let episode: BrainEpisode | null = null;
  let lineBuffer = '';
  let rawBuffer = '';
  let turns: Turn[] = [];
  let rawIdle: { promise: Promise<void>; resolve: () => void } | null = null;
  let ready: { requestId: string; resolve: () => void; reject: (error: Error) => void } | null = null;
  let totals: { tokens: BrainOutput['metrics']['size']['tokens']; usd: number } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const settleRawIdle = () => {
    if (rawIdle && !turns.some((turn) => turn.kind === 'raw')) {
      rawIdle.resolve();
      rawIdle = null;
    }
  };

  const readLines = (chunk: string) => {
    lineBuffer += chunk;
    let newline: number;
    while ((newline = lineBuffer.indexOf('\n')) >= 0) {
      const line = lineBuffer.slice(0, newline).trim();
      lineBuffer = lineBuffer.slice(newline + 1);
      if (!line.startsWith('{')) continue;
      let event: { type?: string; response?: { subtype?: string; request_id?: string; error?: string } };
      try {
        event = JSON.parse(line);
      } catch {
        continue; // a partial or foreign line is not an event
      }
      if (event.type === 'control_response' && ready && event.response?.request_id === ready.requestId) {
        const settle = ready;
        ready = null;
        if (event.response.subtype === 'success') settle.resolve();
        else settle.reject(new BrainCliError(`the claude CLI refused to initialize: ${event.response.error ?? 'no detail'}`));
      }
      // results come in the order the turns were written; a raw turn's result is the caller's own, not an ask's
      if (event.type === 'result') {
        const turn = turns.shift();
        if (turn?.kind === 'call') turn.resolve(event as ClaudeResultEvent);
        settleRawIdle();
      }
    }
  };

  /** kills the running process (group included) and whatever it started that outlived it */
  const kill = async (): Promise<void> => {
    const current = proc;
    if (current) await current.kill();
    // the CLI starts each Bash tool in a session of its own, reparented to init when the CLI dies: the tag finds them
    if (everBooted) await killTagged({ name: CLI_TAG_ENV, value: tag });
  };

  /** spawns the CLI and resolves once it is ready: it answered `initialize` (dispatch), or its TUI prompt takes input (interact) */
  const start = async (nextMode: Mode, nextToolset: Toolset, timeoutMs = BOOT_TIMEOUT_MS): Promise<void> => {
    await kill();
    assertDirectory(context.cwd);
    series ??= randomUUID();
    const command = resolveClaudeBinary({ executable: context.executable }, { env });
    // a session the CLI has saved is resumed (same id); one it never started is created with that id
    const session = hasSavedSession(series, env) ? ['--resume', series] : ['--session-id', series];
    const tools = nextToolset === 'act' ? [...CLAUDE_READ_TOOLS, ...CLAUDE_WRITE_TOOLS] : [...CLAUDE_READ_TOOLS];
    const args =
      nextMode === 'dispatch'
        ? [
            '-p',
            '--output-format',
            'stream-json',
            '--input-format',
            'stream-json',
            '--verbose',
            '--include-partial-messages',
            '--model',
            entry.model,
            ...session,
            '--tools',
            tools.join(','),
            '--allowedTools',
            tools.join(','),
          ]
        : ['--model', entry.model, ...session];
    everBooted = true;
    const spawned =
      nextMode === 'dispatch' ? spawnPiped({ command, args, cwd: context.cwd, env }) : spawnPty({ command, args, cwd: context.cwd, env });
    proc = spawned;
    mode = nextMode;
    toolset = nextMode === 'dispatch' ? nextToolset : null;
    lineBuffer = '';
    rawBuffer = '';
    totals = null;
    const requestId = `bhrain-init-${randomUUID()}`;
    const isReady = new Promise<void>((resolve, reject) => (ready = { requestId, resolve, reject }));
    let screen = '';
    spawned.onData((chunk) => {
      if (nextMode === 'dispatch') readLines(chunk);
      else if (ready?.requestId === requestId) {
        // the TUI turns bracketed paste on once its prompt takes input; a CLI that fails at start never does
        screen = (screen + chunk).slice(-4_096);
        if (screen.includes(TUI_READY)) {
          const settle = ready;
          ready = null;
          settle.resolve();
        }
      }
      for (const listener of dataListeners) listener(chunk);
    });
    void spawned.exited.then((exit) => {
      const why = `the claude CLI exited (code ${exit.code}, signal ${exit.signal})${tailOf(spawned.tail()) ? `: ${tailOf(spawned.tail())}` : ''}`;
      if (proc === spawned) {
        proc = null;
        mode = null;
        toolset = null;
        lastExit = why;
      }
      if (ready?.requestId === requestId) {
        const settle = ready;
        ready = null;
        settle.reject(new BrainCliError(`${why}, before it was ready`));
      }
      const orphans = turns;
      turns = [];
      settleRawIdle();
      for (const turn of orphans)
        if (turn.kind === 'call') turn.reject(new BrainCliError(`${why}, before answering. Boot again to resume series ${series}`));
      for (const listener of exitListeners) listener(exit);
    });
    if (nextMode === 'dispatch')
      spawned.write(`${JSON.stringify({ type: 'control_request', request_id: requestId, request: { subtype: 'initialize' } })}\n`);
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BrainCliError(`the claude CLI was not ready within ${timeoutMs} ms of starting; it was killed`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([isReady, hung]);
    } catch (error) {
      await kill();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };

  /** interrupts the running turn with the CLI's own control request; reboots on --resume if the turn does not end */
  const interrupt = async (turn: Promise<unknown>) => {
    const current = proc;
    if (!current) return;
    current.write(
      `${JSON.stringify({ type: 'control_request', request_id: `bhrain-interrupt-${randomUUID()}`, request: { subtype: 'interrupt' } })}\n`,
    );
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      turn.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), INTERRUPT_GRACE_MS))),
    ]);
    clearTimeout(timer);
    if (!ended && proc === current) await start('dispatch', toolset ?? 'ask');
  };

  /** the result of a turn, or the typed error once its timeout or the caller's signal ends it first (interrupting it) */
  const bounded = async (turn: Promise<ClaudeResultEvent>, call: { kind: Toolset; timeoutMs: number; signal?: AbortSignal }) => {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const cut = new Promise<'timeout' | 'abort'>((resolve) => {
      if (Number.isFinite(call.timeoutMs)) timer = setTimeout(() => resolve('timeout'), call.timeoutMs);
      onAbort = () => resolve('abort');
      call.signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const first = await Promise.race([turn, cut]);
      if (typeof first !== 'string') return first;
      await interrupt(turn);
      if (first === 'abort')
        throw new AbortedError(`${call.kind} was aborted by the caller; the turn was interrupted and series ${series} is kept`);
      throw new BrainCliTimeoutError(
        `${call.kind} got no answer within ${call.timeoutMs} ms (timeoutMs); the turn was interrupted and series ${series} is kept: the next call continues it`,
        series,
        call.timeoutMs,
      );
    } finally {
      clearTimeout(timer);
      if (onAbort) call.signal?.removeEventListener('abort', onAbort);
    }
  };

  const dispatch = (
    kind: Toolset,
    call: { prompt: string; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<BrainOutput<string, BrainSeries>> => {
    const timeoutMs = call.timeoutMs ?? BRAIN_CLI_CALL_TIMEOUT_MS;
    if (!(timeoutMs > 0))
      return Promise.reject(
        new BadRequestError(`timeoutMs must be a positive number of milliseconds (or Infinity), got ${call.timeoutMs}`),
      );
    const run = async () => {
      if (call.signal?.aborted) throw new AbortedError(`${kind} was aborted by the caller before it was sent`);
      if (!proc || mode !== 'dispatch')
        throw new BadRequestError(
          `${kind} needs a process booted in dispatch mode (mode is ${mode ?? 'not booted'}${!proc && lastExit ? `; ${lastExit}` : ''}): call executor.boot({ mode: 'dispatch' }) first`,
        );
      // ask and act run with different tool sets: switching reboots the process and resumes the session
      if (toolset !== kind) await start('dispatch', kind);
      // a raw turn the caller wrote is answered first; writing now could fold this prompt into it
      while (rawIdle) await rawIdle.promise;
      const started = performance.now();
      const result = new Promise<ClaudeResultEvent>((resolve, reject) => turns.push({ kind: 'call', resolve, reject }));
      proc!.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: call.prompt } })}\n`);
      const event = await bounded(result, { kind, timeoutMs, signal: call.signal });
      if (event.is_error || event.subtype !== 'success')
        throw new BrainCliError(
          `the claude CLI answered with an error (${event.subtype}${event.api_error_status ? `, HTTP ${event.api_error_status}` : ''}): ${event.result ?? 'no detail'}`,
        );
      const metrics = readResultMetrics(event, totals, entry.price);
      totals = metrics.totals;
      episode = appendBrainExchange({
        episode,
        exchange: genBrainExchange({ input: call.prompt, output: event.result ?? '', exid: event.uuid ?? null }),
        exid: series,
      });
      return {
        output: event.result ?? '',
        episode,
        series: genBrainSeries({ episodes: [episode], exid: series }),
        metrics: {
          size: {
            tokens: metrics.tokens,
            chars: { input: call.prompt.length, output: (event.result ?? '').length, cache: { get: 0, set: 0 } },
          },
          cost: { time: { milliseconds: Math.round(event.duration_ms ?? performance.now() - started) }, cash: metrics.cash },
        },
      };
    };
    // one call at a time: the CLI answers in order, and a result must meet the call that asked for it
    const next = queue.then(run, run);
    queue = next.catch(() => undefined);
    return next;
  };

  /** notes each stream-json user line the caller writes raw: its result belongs to the caller, not to a later ask */
  const trackRawTurns = (data: string) => {
    rawBuffer += data;
    let newline: number;
    while ((newline = rawBuffer.indexOf('\n')) >= 0) {
      const line = rawBuffer.slice(0, newline).trim();
      rawBuffer = rawBuffer.slice(newline + 1);
      try {
        if (JSON.parse(line)?.type !== 'user') continue;
      } catch {
        continue; // not a protocol line: the CLI will say so
      }
      turns.push({ kind: 'raw' });
      if (!rawIdle) {
        let resolve!: () => void;
        const promise = new Promise<void>((done) => (resolve = done));
        rawIdle = { promise, resolve };
      }
    }
  };

  return {
    slug,
    get pid(): number | null {
      return proc?.pid ?? null;
    },
    get mode(): Mode | null {
      return mode;
    },
    /** the CLI's session id: the same across reboots, mode switches and crashes */
    get series(): string | null {
      return series;
    },
    /** read-only tools; rejects with BrainCliTimeoutError after timeoutMs (default 10 min), AbortedError on signal */
    ask: (call: { prompt: string; timeoutMs?: number; signal?: AbortSignal }) => dispatch('ask', call),
    /** read and write tools (a reboot with --resume when switching from ask); bounded like ask */
    act: (call: { prompt: string; timeoutMs?: number; signal?: AbortSignal }) => dispatch('act', call),
    executor: {
      /** kills any running process, then starts one in the mode asked for, resuming the series; resolves once it is ready */
      boot: async (options: { mode: Mode; timeoutMs?: number }): Promise<void> => {
        if (options.mode !== 'dispatch' && options.mode !== 'interact')
          throw new BadRequestError(`unknown mode '${String(options.mode)}': choose dispatch or interact`);
        if (options.timeoutMs !== undefined && !(options.timeoutMs > 0))
          throw new BadRequestError(`boot's timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}`);
        await start(options.mode, 'ask', options.timeoutMs);
      },
      /** a no-op when nothing runs; also kills what a crashed CLI left running */
      kill,
    },
    terminal: {
      /** raw bytes to the PTY, or raw stream-json lines to a dispatch process (a user line there is the caller's own turn) */
      write: (data: string): void => {
        if (!proc) throw new BadRequestError(`no process to write to: call executor.boot first${lastExit ? ` (${lastExit})` : ''}`);
        if (mode === 'dispatch') trackRawTurns(data);
        proc.write(data);
      },
      onData: (listener: (chunk: string) => void): (() => void) => {
        dataListeners.add(listener);
        return () => dataListeners.delete(listener);
      },
      onExit: (listener: (exit: CliExit) => void): (() => void) => {
        exitListeners.add(listener);
        return () => exitListeners.delete(listener);
      },
    },
  };
};

/** .what = a BrainCli handle */
export type BrainCli = ReturnType<typeof genBrainCli>;

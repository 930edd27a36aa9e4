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
import { killTagged } from '../../process/killTagged.js';
import { watchDeadline, type DeadlineCut } from '../../process/watchDeadline.js';
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
  const [prefix, model, ...extra] = slug.split('/');
  const name = (model ?? CLAUDE_DEFAULT) as keyof typeof CLAUDE_MODELS;
  if (prefix !== 'claude' || extra.length || !CLAUDE_MODELS[name])
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

/** .what = everything one handle holds: its process and mode, its series, and the protocol state of stream-json */
interface CliState {
  entry: BrainModelEntry;
  cwd: string;
  executable: string | undefined;
  /** the env every process gets, with the tag (CLI_TAG_ENV) that marks it */
  env: NodeJS.ProcessEnv;
  tag: string;
  dataListeners: Set<(chunk: string) => void>;
  exitListeners: Set<(exit: CliExit) => void>;
  proc: CliProcess | null;
  mode: Mode | null;
  toolset: Toolset | null;
  series: string | null;
  everBooted: boolean;
  lastExit: string | null;
  episode: BrainEpisode | null;
  lineBuffer: string;
  rawBuffer: string;
  turns: Turn[];
  rawIdle: { promise: Promise<void>; resolve: () => void } | null;
  ready: { requestId: string; resolve: () => void; reject: (error: Error) => void } | null;
  totals: { tokens: BrainOutput['metrics']['size']['tokens']; usd: number } | null;
  queue: Promise<unknown>;
}

/** .what = lets the calls waiting on raw turns go, once none is left */
const settleRawIdle = (state: CliState): void => {
  if (state.rawIdle && !state.turns.some((turn) => turn.kind === 'raw')) {
    state.rawIdle.resolve();
    state.rawIdle = null;
  }
};

/** .what = reads stream-json lines: the answer to `initialize`, and each result, given to the turn it answers */
const readLines = (state: CliState, chunk: string): void => {
  state.lineBuffer += chunk;
  let newline: number;
  while ((newline = state.lineBuffer.indexOf('\n')) >= 0) {
    const line = state.lineBuffer.slice(0, newline).trim();
    state.lineBuffer = state.lineBuffer.slice(newline + 1);
    if (!line.startsWith('{')) continue;
    let event: { type?: string; response?: { subtype?: string; request_id?: string; error?: string } };
    try {
      event = JSON.parse(line);
    } catch {
      continue; // a partial or foreign line is not an event
    }
    if (event.type === 'control_response' && state.ready && event.response?.request_id === state.ready.requestId) {
      const settle = state.ready;
      state.ready = null;
      if (event.response.subtype === 'success') settle.resolve();
      else settle.reject(new BrainCliError(`the claude CLI refused to initialize: ${event.response.error ?? 'no detail'}`));
    }
    // results come in the order the turns were written; a raw turn's result is the caller's own, not an ask's
    if (event.type === 'result') {
      const turn = state.turns.shift();
      if (turn?.kind === 'call') turn.resolve(event as ClaudeResultEvent);
      settleRawIdle(state);
    }
  }
};

/** .what = kills the running process (group included) and whatever it started that outlived it */
const killCli = async (state: CliState): Promise<void> => {
  const current = state.proc;
  if (current) await current.kill();
  // the CLI starts each Bash tool in a session of its own, reparented to init when the CLI dies: the tag finds them
  if (state.everBooted) await killTagged({ name: CLI_TAG_ENV, value: state.tag });
};

/** .what = the CLI's arguments for a mode: stream-json both ways with the toolset's tools (dispatch), or the TUI (interact) */
const cliArgs = (state: CliState, mode: Mode, toolset: Toolset, series: string): string[] => {
  // a session the CLI has saved is resumed (same id); one it never started is created with that id
  const session = hasSavedSession(series, state.env) ? ['--resume', series] : ['--session-id', series];
  if (mode === 'interact') return ['--model', state.entry.model, ...session];
  const tools = (toolset === 'act' ? [...CLAUDE_READ_TOOLS, ...CLAUDE_WRITE_TOOLS] : [...CLAUDE_READ_TOOLS]).join(',');
  return [
    ...['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose', '--include-partial-messages'],
    ...['--model', state.entry.model, ...session, '--tools', tools, '--allowedTools', tools],
  ];
};

/** .what = what a process's exit does: the handle forgets it, its waiting boot and turns are rejected saying why */
const onCliExit = (state: CliState, spawned: CliProcess, requestId: string, exit: CliExit): void => {
  const said = tailOf(spawned.tail());
  const why = `the claude CLI exited (code ${exit.code}, signal ${exit.signal})${said ? `: ${said}` : ''}`;
  if (state.proc === spawned) {
    state.proc = null;
    state.mode = null;
    state.toolset = null;
    state.lastExit = why;
  }
  if (state.ready?.requestId === requestId) {
    const settle = state.ready;
    state.ready = null;
    settle.reject(new BrainCliError(`${why}, before it was ready`));
  }
  const orphans = state.turns;
  state.turns = [];
  settleRawIdle(state);
  for (const turn of orphans)
    if (turn.kind === 'call') turn.reject(new BrainCliError(`${why}, before answering. Boot again to resume series ${state.series}`));
  for (const listener of state.exitListeners) listener(exit);
};

/** .what = what the process prints: stream-json lines (dispatch), or a screen that is ready once the TUI takes input (interact) */
const onCliData = (state: CliState, mode: Mode, requestId: string) => {
  let screen = '';
  return (chunk: string): void => {
    if (mode === 'dispatch') readLines(state, chunk);
    else if (state.ready?.requestId === requestId) {
      // the TUI turns bracketed paste on once its prompt takes input; a CLI that fails at start never does
      screen = (screen + chunk).slice(-4_096);
      if (screen.includes(TUI_READY)) {
        const settle = state.ready;
        state.ready = null;
        settle.resolve();
      }
    }
    for (const listener of state.dataListeners) listener(chunk);
  };
};

/** .what = spawns the CLI and resolves once it is ready: it answered `initialize` (dispatch), or its TUI prompt takes input (interact) */
const startCli = async (state: CliState, mode: Mode, toolset: Toolset, timeoutMs = BOOT_TIMEOUT_MS): Promise<void> => {
  await killCli(state);
  assertDirectory(state.cwd);
  const series = (state.series ??= randomUUID());
  const command = resolveClaudeBinary({ executable: state.executable }, { env: state.env });
  const args = cliArgs(state, mode, toolset, series);
  state.everBooted = true;
  const spawn = mode === 'dispatch' ? spawnPiped : spawnPty;
  const spawned = spawn({ command, args, cwd: state.cwd, env: state.env });
  state.proc = spawned;
  state.mode = mode;
  state.toolset = mode === 'dispatch' ? toolset : null;
  state.lineBuffer = '';
  state.rawBuffer = '';
  state.totals = null;
  const requestId = `bhrain-init-${randomUUID()}`;
  const isReady = new Promise<void>((resolve, reject) => (state.ready = { requestId, resolve, reject }));
  spawned.onData(onCliData(state, mode, requestId));
  void spawned.exited.then((exit) => onCliExit(state, spawned, requestId, exit));
  if (mode === 'dispatch')
    spawned.write(`${JSON.stringify({ type: 'control_request', request_id: requestId, request: { subtype: 'initialize' } })}\n`);
  let stopWatching = (): void => {};
  const hung = new Promise<never>((_, reject) => {
    stopWatching = watchDeadline({ timeoutMs }, () =>
      reject(new BrainCliError(`the claude CLI was not ready within ${timeoutMs} ms of starting; it was killed`)),
    );
  });
  try {
    await Promise.race([isReady, hung]);
  } catch (error) {
    await killCli(state);
    throw error;
  } finally {
    stopWatching();
  }
};

/** .what = interrupts the running turn with the CLI's own control request; reboots on --resume if the turn does not end */
const interruptTurn = async (state: CliState, turn: Promise<unknown>): Promise<void> => {
  const current = state.proc;
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
  if (!ended && state.proc === current) await startCli(state, 'dispatch', state.toolset ?? 'ask');
};

/** .what = the result of a turn, or the typed error once its timeout or the caller's signal ends it first (interrupting it) */
const boundTurn = async (
  state: CliState,
  turn: Promise<ClaudeResultEvent>,
  call: { kind: Toolset; timeoutMs: number; signal?: AbortSignal },
): Promise<ClaudeResultEvent> => {
  let stopWatching = (): void => {};
  const cut = new Promise<DeadlineCut>((resolve) => (stopWatching = watchDeadline(call, resolve)));
  try {
    const first = await Promise.race([turn, cut]);
    if (typeof first !== 'string') return first;
    await interruptTurn(state, turn);
    if (first === 'abort')
      throw new AbortedError(`${call.kind} was aborted by the caller; the turn was interrupted and series ${state.series} is kept`);
    throw new BrainCliTimeoutError(
      `${call.kind} got no answer within ${call.timeoutMs} ms (timeoutMs); the turn was interrupted and series ${state.series} is kept: the next call continues it`,
      state.series,
      call.timeoutMs,
    );
  } finally {
    stopWatching();
  }
};

/** .what = a successful result as a BrainOutput: the answer, the episode and series it extends, and the call's metrics */
const toBrainOutput = (state: CliState, prompt: string, event: ClaudeResultEvent, started: number): BrainOutput<string, BrainSeries> => {
  const metrics = readResultMetrics(event, state.totals, state.entry.price);
  state.totals = metrics.totals;
  const output = event.result ?? '';
  state.episode = appendBrainExchange({
    episode: state.episode,
    exchange: genBrainExchange({ input: prompt, output, exid: event.uuid ?? null }),
    exid: state.series,
  });
  return {
    output,
    episode: state.episode,
    series: genBrainSeries({ episodes: [state.episode], exid: state.series }),
    metrics: {
      size: { tokens: metrics.tokens, chars: { input: prompt.length, output: output.length, cache: { get: 0, set: 0 } } },
      cost: { time: { milliseconds: Math.round(event.duration_ms ?? performance.now() - started) }, cash: metrics.cash },
    },
  };
};

/** .what = one ask or act: sent once the turns before it are answered, bounded by its timeout and signal */
const dispatchCall = (
  state: CliState,
  kind: Toolset,
  call: { prompt: string; timeoutMs?: number; signal?: AbortSignal },
): Promise<BrainOutput<string, BrainSeries>> => {
  const timeoutMs = call.timeoutMs ?? BRAIN_CLI_CALL_TIMEOUT_MS;
  if (!(timeoutMs > 0))
    return Promise.reject(new BadRequestError(`timeoutMs must be a positive number of milliseconds (or Infinity), got ${call.timeoutMs}`));
  const run = async () => {
    if (call.signal?.aborted) throw new AbortedError(`${kind} was aborted by the caller before it was sent`);
    if (!state.proc || state.mode !== 'dispatch')
      throw new BadRequestError(
        `${kind} needs a process booted in dispatch mode (mode is ${state.mode ?? 'not booted'}${!state.proc && state.lastExit ? `; ${state.lastExit}` : ''}): call executor.boot({ mode: 'dispatch' }) first`,
      );
    // ask and act run with different tool sets: switching reboots the process and resumes the session
    if (state.toolset !== kind) await startCli(state, 'dispatch', kind);
    // a raw turn the caller wrote is answered first; writing now could fold this prompt into it
    while (state.rawIdle) await state.rawIdle.promise;
    const started = performance.now();
    const result = new Promise<ClaudeResultEvent>((resolve, reject) => state.turns.push({ kind: 'call', resolve, reject }));
    state.proc!.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: call.prompt } })}\n`);
    const event = await boundTurn(state, result, { kind, timeoutMs, signal: call.signal });
    if (event.is_error || event.subtype !== 'success')
      throw new BrainCliError(
        `the claude CLI answered with an error (${event.subtype}${event.api_error_status ? `, HTTP ${event.api_error_status}` : ''}): ${event.result ?? 'no detail'}`,
      );
    return toBrainOutput(state, call.prompt, event, started);
  };
  // one call at a time: the CLI answers in order, and a result must meet the call that asked for it
  const next = state.queue.then(run, run);
  state.queue = next.catch(() => undefined);
  return next;
};

/** .what = notes each stream-json user line the caller writes raw: its result belongs to the caller, not to a later ask */
const trackRawTurns = (state: CliState, data: string): void => {
  state.rawBuffer += data;
  let newline: number;
  while ((newline = state.rawBuffer.indexOf('\n')) >= 0) {
    const line = state.rawBuffer.slice(0, newline).trim();
    state.rawBuffer = state.rawBuffer.slice(newline + 1);
    try {
      if (JSON.parse(line)?.type !== 'user') continue;
    } catch {
      continue; // not a protocol line: the CLI will say so
    }
    state.turns.push({ kind: 'raw' });
    if (!state.rawIdle) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      state.rawIdle = { promise, resolve };
    }
  }
};

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
  const state: CliState = {
    entry,
    cwd: context.cwd,
    executable: context.executable,
    env: { ...(context.env ?? process.env), [CLI_TAG_ENV]: tag } as NodeJS.ProcessEnv,
    tag,
    dataListeners: new Set(),
    exitListeners: new Set(),
    proc: null,
    mode: null,
    toolset: null,
    series: null,
    everBooted: false,
    lastExit: null,
    episode: null,
    lineBuffer: '',
    rawBuffer: '',
    turns: [],
    rawIdle: null,
    ready: null,
    totals: null,
    queue: Promise.resolve(),
  };

  return {
    slug,
    get pid(): number | null {
      return state.proc?.pid ?? null;
    },
    get mode(): Mode | null {
      return state.mode;
    },
    /** the CLI's session id: the same across reboots, mode switches and crashes */
    get series(): string | null {
      return state.series;
    },
    /** read-only tools; rejects with BrainCliTimeoutError after timeoutMs (default 10 min), AbortedError on signal */
    ask: (call: { prompt: string; timeoutMs?: number; signal?: AbortSignal }) => dispatchCall(state, 'ask', call),
    /** read and write tools (a reboot with --resume when switching from ask); bounded like ask */
    act: (call: { prompt: string; timeoutMs?: number; signal?: AbortSignal }) => dispatchCall(state, 'act', call),
    executor: {
      /** kills any running process, then starts one in the mode asked for, resuming the series; resolves once it is ready */
      boot: async (options: { mode: Mode; timeoutMs?: number }): Promise<void> => {
        if (options.mode !== 'dispatch' && options.mode !== 'interact')
          throw new BadRequestError(`unknown mode '${String(options.mode)}': choose dispatch or interact`);
        if (options.timeoutMs !== undefined && !(options.timeoutMs > 0))
          throw new BadRequestError(`boot's timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}`);
        await startCli(state, options.mode, 'ask', options.timeoutMs);
      },
      /** a no-op when nothing runs; also kills what a crashed CLI left running */
      kill: () => killCli(state),
    },
    terminal: {
      /** raw bytes to the PTY, or raw stream-json lines to a dispatch process (a user line there is the caller's own turn) */
      write: (data: string): void => {
        if (!state.proc)
          throw new BadRequestError(`no process to write to: call executor.boot first${state.lastExit ? ` (${state.lastExit})` : ''}`);
        if (state.mode === 'dispatch') trackRawTurns(state, data);
        state.proc.write(data);
      },
      onData: (listener: (chunk: string) => void): (() => void) => {
        state.dataListeners.add(listener);
        return () => state.dataListeners.delete(listener);
      },
      onExit: (listener: (exit: CliExit) => void): (() => void) => {
        state.exitListeners.add(listener);
        return () => state.exitListeners.delete(listener);
      },
    },
  };
};

/** .what = a BrainCli handle */
export type BrainCli = ReturnType<typeof genBrainCli>;

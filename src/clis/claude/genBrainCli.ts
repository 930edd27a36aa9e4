import { randomUUID } from 'node:crypto';

import { CLAUDE_DEFAULT, CLAUDE_MODELS, type BrainModelEntry } from '../../atoms/models.js';
import { appendBrainExchange, type BrainEpisode } from '../../contract/BrainEpisode.js';
import { genBrainExchange } from '../../contract/BrainExchange.js';
import type { BrainOutput } from '../../contract/BrainOutput.js';
import { genBrainSeries, type BrainSeries } from '../../contract/BrainSeries.js';
import { BadRequestError, BhrainError } from '../../contract/errors.js';
import { spawnPiped, spawnPty, type CliExit, type CliProcess } from './CliProcess.js';
import { readResultMetrics, type ClaudeResultEvent } from './readResultEvent.js';
import { resolveClaudeBinary } from './resolveClaudeBinary.js';

/** tools ask allows: they read and search, and change nothing */
export const CLAUDE_READ_TOOLS = ['Read', 'Grep', 'Glob', 'WebSearch', 'WebFetch'] as const;
/** tools act allows on top: edits, writes and shell commands */
export const CLAUDE_WRITE_TOOLS = ['Edit', 'Write', 'Bash'] as const;

/** .what = the claude CLI answered a call with an error result, or died before answering */
export class BrainCliError extends BhrainError {
  readonly exitCode = 4;
  readonly code = 'BRAIN_CLI';
}

type Toolset = 'ask' | 'act';
type Mode = 'dispatch' | 'interact';

/** .what = the model entry behind a claude slug; an unknown slug is a BadRequestError naming it */
const resolveSlug = (slug: string): { slug: string; entry: BrainModelEntry } => {
  const [supplier, model, ...extra] = slug.split('/');
  const name = (model ?? CLAUDE_DEFAULT) as keyof typeof CLAUDE_MODELS;
  if (supplier !== 'claude' || extra.length || !CLAUDE_MODELS[name])
    throw new BadRequestError(
      `unknown brain cli slug '${slug}': choose one of claude, ${Object.keys(CLAUDE_MODELS).map((key) => `claude/${key}`).join(', ')}`,
    );
  return { slug: `claude/${name}`, entry: CLAUDE_MODELS[name] };
};

/**
 * .what = a handle over the real Claude Code CLI: boot it headless (dispatch: stream-json, ask/act) or in a PTY
 *         (interact: raw bytes), with one series (the CLI's session id) that survives reboots, mode switches and crashes
 * .why = drive Claude Code as a brain: per-call metrics and refs in dispatch, a real terminal in interact
 * .note = constructing spawns nothing (pid and mode stay null until boot)
 */
export const genBrainCli = (input: { slug: string }, context: { cwd: string; env?: Record<string, string | undefined> }) => {
  const { slug, entry } = resolveSlug(input.slug);
  const env = { ...(context.env ?? process.env) } as NodeJS.ProcessEnv;
  const dataListeners = new Set<(chunk: string) => void>();
  const exitListeners = new Set<(exit: CliExit) => void>();
  let proc: CliProcess | null = null;
  let mode: Mode | null = null;
  let toolset: Toolset | null = null;
  let series: string | null = null;
  let sessionStarted = false;
  let episode: BrainEpisode | null = null;
  let lineBuffer = '';
  let pending: { resolve: (event: ClaudeResultEvent) => void; reject: (error: Error) => void } | null = null;
  let totals: { tokens: BrainOutput['metrics']['size']['tokens']; usd: number } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const readLines = (chunk: string) => {
    lineBuffer += chunk;
    let newline: number;
    while ((newline = lineBuffer.indexOf('\n')) >= 0) {
      const line = lineBuffer.slice(0, newline).trim();
      lineBuffer = lineBuffer.slice(newline + 1);
      if (!line.startsWith('{')) continue;
      let event: { type?: string; session_id?: string };
      try {
        event = JSON.parse(line);
      } catch {
        continue; // a partial or foreign line is not an event
      }
      if (event.session_id) sessionStarted = true;
      if (event.type === 'result' && pending) {
        const settle = pending;
        pending = null;
        settle.resolve(event as ClaudeResultEvent);
      }
    }
  };

  const kill = async (): Promise<void> => {
    const current = proc;
    if (!current) return;
    await current.kill();
  };

  const spawnProcess = (nextMode: Mode, nextToolset: Toolset) => {
    series ??= randomUUID();
    // a session the CLI has saved is resumed (same id); one it never started is created with that id
    const session = sessionStarted ? ['--resume', series] : ['--session-id', series];
    const tools = nextToolset === 'act' ? [...CLAUDE_READ_TOOLS, ...CLAUDE_WRITE_TOOLS] : [...CLAUDE_READ_TOOLS];
    const args =
      nextMode === 'dispatch'
        ? ['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose', '--model', entry.model, ...session, '--tools', tools.join(','), '--allowedTools', tools.join(',')]
        : ['--model', entry.model, ...session];
    const command = resolveClaudeBinary(env);
    const spawned = nextMode === 'dispatch' ? spawnPiped({ command, args, cwd: context.cwd, env }) : spawnPty({ command, args, cwd: context.cwd, env });
    proc = spawned;
    mode = nextMode;
    toolset = nextMode === 'dispatch' ? nextToolset : null;
    lineBuffer = '';
    totals = null;
    spawned.onData((chunk) => {
      if (nextMode === 'dispatch') readLines(chunk);
      for (const listener of dataListeners) listener(chunk);
    });
    void spawned.exited.then((exit) => {
      if (proc === spawned) {
        proc = null;
        mode = null;
        toolset = null;
      }
      if (pending) {
        const settle = pending;
        pending = null;
        settle.reject(
          new BrainCliError(
            `the claude CLI exited (code ${exit.code}, signal ${exit.signal}) before answering${spawned.stderr?.() ? `: ${spawned.stderr?.().trim().slice(-500)}` : ''}. Boot again to resume series ${series}`,
          ),
        );
      }
      for (const listener of exitListeners) listener(exit);
    });
  };

  const dispatch = (kind: Toolset, prompt: string): Promise<BrainOutput<string, BrainSeries>> => {
    const run = async () => {
      if (!proc || mode !== 'dispatch')
        throw new BadRequestError(
          `${kind} needs a process booted in dispatch mode (mode is ${mode ?? 'not booted'}): call executor.boot({ mode: 'dispatch' }) first`,
        );
      // ask and act run with different tool sets: switching reboots the process and resumes the session
      if (toolset !== kind) {
        await kill();
        spawnProcess('dispatch', kind);
      }
      const started = performance.now();
      const result = new Promise<ClaudeResultEvent>((resolve, reject) => (pending = { resolve, reject }));
      proc!.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt } })}\n`);
      const event = await result;
      if (event.is_error || event.subtype !== 'success')
        throw new BrainCliError(
          `the claude CLI answered with an error (${event.subtype}${event.api_error_status ? `, HTTP ${event.api_error_status}` : ''}): ${event.result ?? 'no detail'}`,
        );
      const metrics = readResultMetrics(event, totals, entry.price);
      totals = metrics.totals;
      episode = appendBrainExchange({
        episode,
        exchange: genBrainExchange({ input: prompt, output: event.result ?? '', exid: event.uuid ?? null }),
        exid: series,
      });
      return {
        output: event.result ?? '',
        episode,
        series: genBrainSeries({ episodes: [episode], exid: series }),
        metrics: {
          size: {
            tokens: metrics.tokens,
            chars: { input: prompt.length, output: (event.result ?? '').length, cache: { get: 0, set: 0 } },
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
    ask: (call: { prompt: string }) => dispatch('ask', call.prompt),
    act: (call: { prompt: string }) => dispatch('act', call.prompt),
    executor: {
      /** kills any running process, then starts one in the mode asked for, resuming the series */
      boot: async (options: { mode: Mode }): Promise<void> => {
        if (options.mode !== 'dispatch' && options.mode !== 'interact')
          throw new BadRequestError(`unknown mode '${String(options.mode)}': choose dispatch or interact`);
        await kill();
        spawnProcess(options.mode, 'ask');
      },
      /** a no-op when nothing runs */
      kill,
    },
    terminal: {
      write: (data: string): void => {
        if (!proc) throw new BadRequestError('no process to write to: call executor.boot first');
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

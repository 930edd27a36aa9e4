import type { BhrainEvent } from '../../agent/events.js';
import type { BrainTokens } from '../../core/contract/BrainOutput.js';
import type { RunAudit } from '../audit/genRunAudit.js';

/** .what = whose event it is: the run's own session, or one of its subagents' sessions (context.onSubagentEvent) */
export type RunEventOrigin = 'session' | 'subagent';

/** .what = the run has started its session: its record is open (null with --no-record) */
export interface RunStart {
  atom: string;
  cwd: string;
  record: string | null;
}

/** .what = streamed text, as --include-partial-messages writes it: a delta, or "the text so far is void" */
export type RunDelta = { type: 'TextDelta'; text: string } | { type: 'TextReset' } | { type: 'ReasoningDelta'; text: string };

/** .what = how a run ended, answered or failed: what the CLI's exit code, its summary and its telemetry say */
export interface RunEnd {
  exitCode: number;
  termination: string;
  /** the task and the answer as the run printed them (redacted); null when the run never got that far */
  prompt: string | null;
  answer: string | null;
  error: string | null;
  metrics: { iterations: number; tokens: BrainTokens; costUsd: number | null; elapsedMs: number } | null;
  denials: Array<{ tool: string; reason: string; by: string }>;
  audit: RunAudit | null;
}

/**
 * .what = one output of a run (its record, audit, telemetry, GitHub output, stream-json, progress display, ...): an
 *         observer of the run's one typed stream, each method optional
 * .why = a new output is one new sink, never one more branch of the run (as openai-agents-js's TracingProcessor); a
 *        sink that throws is reported as a warning by fanOutRunSinks and stops neither the run nor the other sinks
 */
export interface RunSink {
  /** names the sink in the warning when it fails */
  name: string;
  onStart?: (start: RunStart) => void;
  onEvent?: (event: BhrainEvent, origin: RunEventOrigin) => void;
  onDelta?: (delta: RunDelta) => void;
  /** the run threw before it answered: what the sink began for its end is given up */
  onFailure?: () => void | Promise<void>;
  /** the run ended (answered or failed): a sink may change the exit code by returning it (GitHub: a summary not written) */
  onEnd?: (end: RunEnd) => number | void | Promise<number | void>;
  /** last, after every other step of the run: what the sink holds is let go */
  close?: (exitCode: number) => void | Promise<void>;
}

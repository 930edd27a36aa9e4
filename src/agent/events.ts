import type { BrainStopReason } from '../core/contract/BrainAtom.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';
import type { BhrainDenialSource, BhrainTermination } from './BhrainSessionResult.js';
import type { ProtectedChange } from '../sandbox/genProtectedTree.js';

/**
 * .what = the domain events of a bhrain session: records of what happened, emitted to subscribers as it happens
 * .why = observability without coupling: a caller can trace, meter or persist a run from these alone (the CLI's
 *        `--output stream-json` writes them one per line)
 * .note = order within a session: SessionStarted; then per iteration any RequestRetried, ToolCallStarted and
 *         ToolExecutionCompleted per call, IterationCompleted, any Compacted; SessionCompleted last. A session that throws
 *         before it starts (a bad input) emits nothing. A task call emits SubagentStarted and SubagentCompleted between its
 *         ToolCallStarted and ToolExecutionCompleted; the child's own events are not emitted to the parent's subscribers
 *         (its transcript is in result.subagents), only to context.onSubagentEvent when one is given. With hooks, each hook run emits HookStarted and HookCompleted
 *         where its event happens (PreToolUse and PostToolUse between ToolCallStarted and ToolExecutionCompleted)
 */
export type BhrainEvent =
  | BhrainSessionStartedEvent
  | BhrainIterationCompletedEvent
  | BhrainToolCallStartedEvent
  | BhrainToolExecutionCompletedEvent
  | BhrainCompactedEvent
  | BhrainRequestRetriedEvent
  | BhrainSessionCompletedEvent
  | BhrainSubagentStartedEvent
  | BhrainSubagentCompletedEvent
  | BhrainHookStartedEvent
  | BhrainHookCompletedEvent;

/** .what = a session began: which atom runs it, and where its tools work */
export interface BhrainSessionStartedEvent {
  type: 'SessionStarted';
  sessionUuid: string;
  /** the atom's slug, e.g. claude/sonnet */
  atom: string;
  cwd: string;
  occurredAt: string;
}

/** .what = one loop iteration finished (a generation, and the tool calls it asked for) */
export interface BhrainIterationCompletedEvent {
  type: 'IterationCompleted';
  sessionUuid: string;
  iterationNumber: number;
  hadToolCalls: boolean;
  toolCallCount: number;
  /** what this iteration's generation spent, in the names every other event and result uses (reasoning when reported) */
  tokens: BrainTokens;
  /**
   * this iteration's generation, as tokens says it
   * @deprecated read tokens (tokenUsage.inputTokens is tokens.input, cacheGetTokens tokens.cache.get, totalTokens
   *             tokens.input + tokens.output); removed in the next major version
   */
  tokenUsage: { inputTokens: number; outputTokens: number; totalTokens: number; cacheGetTokens: number; cacheSetTokens: number };
  /** the size of the context the model saw this iteration */
  contextTokens: number;
  /** this iteration's model call: the model that answered, when it was sent, how long it took and how many attempts (its retries included), what it cost (null when the price is unknown), and why it stopped */
  generation: {
    model: string;
    requestedAt: string;
    elapsedMs: number;
    attempts: number;
    costUsd: number | null;
    stopReason: BrainStopReason;
  };
  occurredAt: string;
}

/** .what = one tool call is about to be answered (checked for permission, then run) */
export interface BhrainToolCallStartedEvent {
  type: 'ToolCallStarted';
  sessionUuid: string;
  callId: string;
  toolName: string;
  /** the call's arguments, with the secrets of the session's environment redacted */
  input: unknown;
  occurredAt: string;
}

/** .what = one tool call was answered (executed, denied, or refused) */
export interface BhrainToolExecutionCompletedEvent {
  type: 'ToolExecutionCompleted';
  sessionUuid: string;
  callId: string;
  toolName: string;
  durationMs: number;
  success: boolean;
  /** the result as the model reads it: truncated, secrets redacted */
  output: string;
  isError: boolean;
  /** the output was cut: by the tool itself (bash's bounded capture) or by the loop's truncation policy */
  truncated?: boolean;
  /** for a tool that runs a process (bash): its exit code, null when killed by a signal or a timeout */
  exitCode?: number | null;
  /** bash in a sandbox: the protected entries its command made or changed (put right), the repositories it made */
  protectedChanges?: readonly ProtectedChange[];
  /** set when the call was not run because it was denied: by the guard, by the user at a prompt, or with no way to ask */
  denied: null | { by: BhrainDenialSource; reason: string };
  occurredAt: string;
}

/** .what = the memory manager replaced the context */
export interface BhrainCompactedEvent {
  type: 'Compacted';
  sessionUuid: string;
  strategy: string;
  tokensBefore: number;
  tokensAfter: number;
  occurredAt: string;
}

/** .what = a request to the model failed transiently and is about to be sent again */
export interface BhrainRequestRetriedEvent {
  type: 'RequestRetried';
  sessionUuid: string;
  /** the attempt about to be made: 2 for the first retry */
  attempt: number;
  /** the wait before it */
  delayMs: number;
  /** why the last attempt failed: the HTTP status and the error's text */
  reason: string;
  occurredAt: string;
}

/** .what = a session ended: why, and what it spent */
export interface BhrainSessionCompletedEvent {
  type: 'SessionCompleted';
  sessionUuid: string;
  termination: BhrainTermination;
  iterations: number;
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  occurredAt: string;
}

/** .what = what a subagent spent: its iterations, tokens, cost and time, its own subagents' included */
export interface BhrainSubagentMetrics {
  iterations: number;
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
}

/** .what = a task call spawned a child session (docs/design/loop.md#subagents) */
export interface BhrainSubagentStartedEvent {
  type: 'SubagentStarted';
  /** the child's session */
  sessionUuid: string;
  parentSessionUuid: string;
  /** the task call that spawned it */
  callId: string;
  subagentType: string;
  description: string;
  /** the atom the child runs on */
  atom: string;
  occurredAt: string;
}

/** .what = a child session ended: COMPLETED with an answer, or FAILED (error, abort, max-iterations, budget, refusal) */
export interface BhrainSubagentCompletedEvent {
  type: 'SubagentCompleted';
  sessionUuid: string;
  parentSessionUuid: string;
  callId: string;
  subagentType: string;
  status: 'COMPLETED' | 'FAILED';
  termination: BhrainTermination;
  metrics: BhrainSubagentMetrics;
  occurredAt: string;
}

/** .what = what one hook decided: a PreToolUse permission, a block, a stop (continue: false), a failure, or nothing */
export type BhrainHookDecision = 'allow' | 'deny' | 'ask' | 'block' | 'stop' | 'failed' | null;

/** .what = a hook (config.hooks, or a command hook of the settings files) is about to run */
export interface BhrainHookStartedEvent {
  type: 'HookStarted';
  sessionUuid: string;
  /** SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SubagentStop, PreCompact, SessionEnd */
  hookEventName: string;
  /** the hook's name: a command hook's command */
  hookName: string;
  /** PreToolUse, PostToolUse: the tool, by the name the hook was given */
  toolName?: string;
  callId?: string;
  occurredAt: string;
}

/** .what = a hook ended: how long it took, its exit code (0 for a function that returned; null when it failed) and its decision */
export interface BhrainHookCompletedEvent {
  type: 'HookCompleted';
  sessionUuid: string;
  hookEventName: string;
  hookName: string;
  toolName?: string;
  callId?: string;
  durationMs: number;
  exitCode: number | null;
  decision: BhrainHookDecision;
  /** set when the hook failed: threw, crashed, or ran past its timeout */
  error?: string;
  occurredAt: string;
}

/** .what = a subscriber to session events */
export type BhrainEventListener = (event: BhrainEvent) => void;

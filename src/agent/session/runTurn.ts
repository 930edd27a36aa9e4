import type { BrainAtomGeneration } from '../../core/contract/BrainAtom.js';
import { BhrainError, LoopError } from '../../core/contract/errors.js';
import type { BhrainToolCallCounts } from '../BhrainSessionResult.js';
import type { BhrainToolFatalError } from '../tool/BhrainToolError.js';
import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { toolOfBox } from '../tool/executeTool.js';
import { readDenialOf } from '../toolboxes/genToolset.js';
import type { ToolCallOutcome, ToolCallSession } from './executeToolCall.js';
import { budgetReachedOf, generateInSession } from './generateInSession.js';
import type { NextStep } from './resolveTurn.js';
import { runToolCalls } from './runToolCalls.js';
import { appendMessages, contextTokensOf, publishSession, type SessionState } from './SessionState.js';
import { spawnOf } from './spawnOf.js';

/** .what = the counts of a session's tool calls with one turn's outcomes added */
export const tallyToolCalls = (counts: BhrainToolCallCounts, outcomes: readonly ToolCallOutcome[]): BhrainToolCallCounts => {
  const denied = outcomes.filter((outcome) => outcome.denied);
  return {
    made: counts.made + outcomes.length,
    failed: counts.failed + outcomes.filter((outcome) => outcome.message.isError && !outcome.denied).length,
    denied: counts.denied + denied.length,
    promptedDenied: counts.promptedDenied + denied.filter((outcome) => outcome.denied!.by !== 'guard').length,
    denials: [
      ...counts.denials,
      ...denied.map(({ message, denied }) => ({
        callId: message.toolCallId,
        toolName: message.toolName,
        reason: denied!.reason,
        by: denied!.by,
      })),
    ],
  };
};

/** .what = what executing this turn's calls needs from the session: the guard as it is now, and the tools' context */
const toolCallSessionOf = (state: SessionState): ToolCallSession => {
  const { cwd, addDirs, log, env, spillDir, redact } = state.context;
  return {
    sessionUuid: state.uuid,
    registry: state.registry,
    guard: state.plugins().permissionGuard,
    prompter: state.context.prompter ?? null,
    approvals: state.approvals,
    toolContext: { cwd, addDirs, log, env, signal: state.stop.signal, spillDir, redact, spawn: spawnOf(state) },
    readDenial: readDenialOf(state.config),
    redact,
    guardTimeoutMs: state.config.limits.guardTimeoutMs,
    maxToolOutputChars: state.config.limits.maxToolOutputChars,
    spillDir,
    log,
    emit: state.emit,
    // the hook runner is loaded by the first call that has hooks to run, never at start-up
    hooks: state.config.hooks
      ? (event, fields, callId) => import('./sessionHooks.js').then((hooks) => hooks.runSessionHooks(state, event, fields, callId))
      : null,
  };
};

/**
 * .what = the checkpointer a turn of these calls must call: the session's own (not a subagent's), when a call may change
 *         files: its tool's effect is write, exec, delegate or unknown (read and network ones cannot)
 */
const checkpointerFor = (state: SessionState, calls: readonly BrainToolCall[]) => {
  const checkpointer = state.depth === 0 ? state.context.checkpointer : undefined;
  if (!checkpointer) return null;
  const mayChange = calls.some((call) => {
    const box = state.registry.find(call.name);
    const effect = box ? toolOfBox(box, call.name).effect : null;
    return effect !== 'read' && effect !== 'network';
  });
  if (!mayChange) return null;
  // a checkpoint that fails is said, never the session's end: the run must not cost more than its checkpoints
  const warn = (error: unknown) => state.context.log.warn(`checkpoint: ${(error as Error)?.message ?? error}`);
  return {
    before: () => checkpointer.beforeChange().catch(warn),
    after: (turn: number) => checkpointer.afterTurn({ turn }).catch(warn),
  };
};

/** .what = a turn that ran: its generation, and the size of the context after it */
export interface TurnRan {
  type: 'ran';
  generation: BrainAtomGeneration;
  /** the estimated context, its tool results included */
  contextTokens: number;
  /** a tool threw a BhrainToolFatalError: the session ends (its call and the turn's others are answered) */
  fatal: BhrainToolFatalError | null;
}

/** .what = the step a failed request leads to: a budget stop when the wall-time deadline cut it, else an error stop */
const stopOnFailedRequest = (state: SessionState, error: unknown): NextStep => {
  const cut = state.context.signal?.aborted ? null : budgetReachedOf(state);
  if (cut) return { type: 'stop', stop: { termination: 'budget', budgetReached: cut }, note: null };
  const typed =
    error instanceof BhrainError ? error : new LoopError(`the loop failed: ${(error as Error)?.message ?? error}`, { cause: error });
  // the session ends in this error, which its result carries: a caller that reports that may skip this line (endsSession)
  state.context.log.error(`iteration ${state.iteration + 1}: ${typed.message}`, { endsSession: true });
  return { type: 'stop', stop: { termination: 'error', error: typed }, note: null };
};

/**
 * .what = one turn of the loop (docs/design/loop.md#steps-of-a-session): generate → run the calls (permission, execution, in runToolCalls'
 *         order) → append the answer and the results → IterationCompleted → the session entity updated
 * .why = the turn is a function over the session's state; what happens next is resolveTurn's to decide
 */
export const runTurn = async (state: SessionState): Promise<TurnRan | NextStep> => {
  const { systemText, tools } = state.shape();
  const { context } = state;
  const requestedAt = new Date().toISOString();
  const generation = await generateInSession(state, {
    system: systemText,
    messages: state.messages,
    tools,
    onTextDelta: context.onTextDelta,
    onTextReset: context.onTextReset,
    onReasoningDelta: context.onReasoningDelta,
  }).catch((error: unknown) => stopOnFailedRequest(state, error));
  if (!('message' in generation)) return generation;
  const iteration = state.iteration + 1;
  const prompted = generation.tokens.input + generation.tokens.cache.get + generation.tokens.cache.set;
  state.measuredTokens = prompted > 0 ? prompted + generation.tokens.output : null;
  appendMessages(state, [generation.message]);
  if (generation.message.content) state.lastText = generation.message.content;

  const calls = generation.message.toolCalls;
  // a runaway notice depends on the calls alone: judged in the model's order before they run, so each result carries it
  const notices = calls.map((call) => state.runaway.observe(call));
  const checkpoint = checkpointerFor(state, calls);
  // the last turn's checkpoint overlapped this request; it is whole before a call (or a hook) may change a file
  if (calls.length) await state.checkpointing;
  await checkpoint?.before();
  const outcomes = await runToolCalls(
    { calls, notices, maxConcurrent: state.config.limits.maxConcurrentToolCalls },
    toolCallSessionOf(state),
  );
  if (checkpoint) state.checkpointing = checkpoint.after(iteration);
  state.toolCalls = tallyToolCalls(state.toolCalls, outcomes);
  const answered = outcomes.map((outcome) => outcome.message);
  appendMessages(state, answered);

  const size = contextTokensOf(state, answered);
  context.log.info(`iteration ${iteration}: ${calls.length} tool call${calls.length === 1 ? '' : 's'}, context ~${size} tokens`, {
    iteration,
    toolCalls: calls.length,
    contextTokens: size,
  });
  state.emit({
    type: 'IterationCompleted',
    sessionUuid: state.uuid,
    iterationNumber: iteration,
    hadToolCalls: calls.length > 0,
    toolCallCount: calls.length,
    tokens: generation.tokens,
    tokenUsage: {
      inputTokens: generation.tokens.input,
      outputTokens: generation.tokens.output,
      totalTokens: generation.tokens.input + generation.tokens.output,
      cacheGetTokens: generation.tokens.cache.get,
      cacheSetTokens: generation.tokens.cache.set,
    },
    contextTokens: size,
    generation: {
      model: state.config.atom.spec.model,
      requestedAt,
      elapsedMs: Math.round(generation.elapsedMs),
      attempts: generation.attempts,
      costUsd: generation.cash?.total ?? null,
      stopReason: generation.stopReason,
    },
    occurredAt: new Date().toISOString(),
  });
  // the iteration counts as done once its calls are answered
  state.iteration = iteration;
  publishSession(state);
  return { type: 'ran', generation, contextTokens: size, fatal: outcomes.find((outcome) => outcome.fatal)?.fatal ?? null };
};

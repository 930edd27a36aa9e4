import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import { CLARIFICATION_REQUEST } from '../constants.js';
import { applyMemoryUpdate } from './consultMemory.js';
import { describeStop, finishSession, type SessionEnd } from './finishSession.js';
import { budgetReachedOf } from './generateInSession.js';
import { iterate } from './iterate.js';
import { openSession, type RunSessionInput } from './openSession.js';
import { resolveBoundary } from './resolveTurn.js';
import { holdRunning } from './runningSessions.js';
import { appendMessages, contextTokensOf, terminationRequested, type SessionState } from './SessionState.js';

export type { RunSessionInput } from './openSession.js';

/**
 * .what = arms a running session: the caller's abort and the wall-time deadline stop its requests and tools under way,
 *         and it is listed as running (BhrainLoop.terminate finds it); the returned release undoes all three
 */
const armSession = (state: SessionState): (() => void) => {
  const { signal } = state.context;
  const { maxWallTimeMs } = state.config.limits;
  const forwardAbort = () => state.stop.abort(signal?.reason);
  if (signal?.aborted) forwardAbort();
  else signal?.addEventListener('abort', forwardAbort, { once: true });
  const wallLeftMs = maxWallTimeMs === undefined ? null : maxWallTimeMs - state.ledger.spentNow().elapsedMs;
  const deadline =
    wallLeftMs === null
      ? null
      : setTimeout(
          () => {
            state.deadlinePassed = true;
            state.stop.abort(new Error(`the wall-time budget of ${maxWallTimeMs} ms was reached`));
          },
          Math.max(0, wallLeftMs),
        );
  const release = holdRunning(state);
  return () => {
    if (deadline) clearTimeout(deadline);
    signal?.removeEventListener('abort', forwardAbort);
    release();
  };
};

/**
 * .what = the agentic loop (docs/design/loop.md#steps-of-a-session): open the session, then iterate (generate → permission → execute tools
 *         → append results → consult memory) until a step says it is done, checking the boundary before each iteration
 * .why = it ends when a response has no tool calls (or is a refusal), at maxIterations, at a budget limit or when
 *        terminated with a partial answer, or on an error with the partial transcript kept; no tool call is ever left
 *        without a result
 * .note = the budget (limits.maxBudgetUsd, maxTokens, maxWallTimeMs) is checked before every request to the model, the
 *         memory manager's summaries included, over what the session tree spent plus spentBefore; maxWallTimeMs also
 *         aborts a request or tool call still running at the deadline
 * .note = with config.subagents, the session's tools can spawn (the task tool): each child is a fork of this session
 *         (SessionState.fork) that shares its budget, approvals, signal and prompter; the child's tokens and cost are
 *         added to this session's, and the live subagent is in its entity and result
 */
export const runSession = async (input: RunSessionInput): Promise<BhrainSessionResult> => {
  const state = await openSession(input, (child, lineage) =>
    runSession({ ...child, history: [], context: lineage.context, lineage, plugins: undefined }),
  );
  // the hooks (SessionStart, UserPromptSubmit, Stop or SubagentStop, SessionEnd) load only when the config has some
  const hooks = state.config.hooks ? await import('./sessionHooks.js') : null;
  const finish = async (end: SessionEnd) => {
    await state.checkpointing;
    if (hooks && state.depth === 0) await hooks.runSessionHooks(state, 'SessionEnd', { reason: end.termination });
    return finishSession(state, end);
  };
  // an empty request gets a clarification, and no loop
  if (!input.prompt.trim()) return finish({ termination: 'clarification', output: CLARIFICATION_REQUEST });
  const opening = hooks && state.depth === 0 ? await hooks.openWithHooks(state, input.prompt, input.history.length > 0) : null;
  if (opening?.blocked) {
    const notice = `[bhrain did not run the prompt: ${opening.blocked}]`;
    return finish({ termination: 'terminated', output: notice, notice, terminationReason: opening.blocked });
  }
  appendMessages(state, [{ role: 'user', content: opening?.content ?? input.prompt }]);
  const release = armSession(state);
  let stopHookActive = false;
  try {
    for (;;) {
      const stop = resolveBoundary({
        iteration: state.iteration,
        maxIterations: state.config.maxIterations,
        aborted: state.context.signal?.aborted ?? false,
        terminateRequest: terminationRequested(state),
        budgetReached: budgetReachedOf(state),
      });
      if (stop) return await finish(describeStop(stop, { lastText: state.lastText, maxIterations: state.config.maxIterations }));
      // a replacement a background observer signalled is applied between iterations
      const pending = state.pendingUpdate;
      state.pendingUpdate = null;
      if (pending) applyMemoryUpdate(state, pending, contextTokensOf(state, []));
      const { next } = await iterate({ session: state });
      // a Stop (SubagentStop) hook may make a complete session go on, with its reason as the next user message (bounded)
      const goOn =
        hooks && next.type === 'final_output' && next.termination === 'complete'
          ? await hooks.stopWithHooks(state, { stopHookActive })
          : null;
      if (goOn) {
        stopHookActive = true;
        appendMessages(state, [{ role: 'user', content: goOn }]);
        continue;
      }
      if (next.type === 'final_output') return await finish({ termination: next.termination, output: next.output });
      if (next.type === 'stop')
        return await finish(describeStop(next.stop, { lastText: state.lastText, maxIterations: state.config.maxIterations }));
    }
  } finally {
    await state.checkpointing;
    release();
  }
};

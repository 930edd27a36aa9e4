import type { BhrainError } from '../../core/contract/errors.js';
import { pluralize } from '../../core/text/pluralize.js';
import type { BhrainTermination } from '../BhrainSession.js';
import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import { describeBudgetReached, type BhrainBudgetReached } from './checkBudget.js';
import type { SessionStop } from './resolveTurn.js';
import { publishSession, sessionOf, type SessionState } from './SessionState.js';

/** .what = how a session ended: why, its answer, and what goes with the reason */
export interface SessionEnd {
  termination: BhrainTermination;
  output: string;
  /** bhrain's notice of an early stop, as output ends with it (after the partial answer); absent when none */
  notice?: string;
  error?: BhrainError;
  budgetReached?: BhrainBudgetReached;
  terminationReason?: string;
}

/** .what = the terminations in which the model answered; every other one stopped it */
const ANSWERED: ReadonlySet<BhrainTermination> = new Set(['complete', 'refusal', 'clarification']);

/**
 * .what = how a session that stopped before its task was done ends: the partial answer (the model's latest text) with
 *         a notice of why it stopped and how to go on, the notice also apart (a CLI prints it on stderr, not as the answer)
 * .why = pure: one place words every early stop
 */
export const describeStop = (stop: SessionStop, said: { lastText: string; maxIterations: number }): SessionEnd => {
  const partial = said.lastText ? `${said.lastText}\n\n` : '';
  const withNotice = (notice: string) => ({ output: `${partial}${notice}`, notice });
  if (stop.termination === 'max-iterations')
    return {
      termination: 'max-iterations',
      ...withNotice(
        `[bhrain stopped after ${pluralize(said.maxIterations, 'iteration')} (maxIterations) before the task was complete: the answer above is partial. Continue from this session's refs, or allow more iterations.]`,
      ),
    };
  if (stop.termination === 'budget')
    return {
      termination: 'budget',
      ...withNotice(
        `[bhrain stopped before the task was complete: ${describeBudgetReached(stop.budgetReached)}. The answer above is partial. Continue from this session's refs, or raise the limit.]`,
      ),
      budgetReached: stop.budgetReached,
    };
  if (stop.termination === 'terminated')
    return {
      termination: 'terminated',
      ...withNotice(
        `[bhrain stopped before the task was complete: the session was terminated (${stop.reason}). The answer above is partial. Continue from this session's refs.]`,
      ),
      terminationReason: stop.reason,
    };
  return { termination: 'error', output: said.lastText, error: stop.error };
};

/**
 * .what = ends a session: the entity COMPLETED or TERMINATED, the result, the closing log line and SessionCompleted
 * .why = every way out of the loop ends here, so every result and event says the same about it
 */
export const finishSession = (state: SessionState, end: SessionEnd): BhrainSessionResult => {
  const { log } = state.context;
  // the result carries both: a caller that reports it (the CLI's notice) may skip these lines (endsSession)
  if (end.termination === 'budget') log.warn(`session stopped: ${describeBudgetReached(end.budgetReached!)}`, { endsSession: true });
  if (end.termination === 'terminated') log.warn(`session terminated: ${end.terminationReason}`, { endsSession: true });
  publishSession(state, {
    status: ANSWERED.has(end.termination) ? 'COMPLETED' : 'TERMINATED',
    endedAt: new Date().toISOString(),
    terminationReason: end.terminationReason ?? null,
  });
  const result: BhrainSessionResult = {
    sessionUuid: state.uuid,
    output: end.output,
    notice: end.notice ?? null,
    termination: end.termination,
    terminationReason: end.terminationReason ?? null,
    iterations: state.iteration,
    tokens: state.tokens,
    cash: state.cash ?? null,
    elapsedMs: Math.round(performance.now() - state.startedMs),
    transcript: [...state.transcript],
    messages: [...state.messages],
    compactions: state.compactions,
    error: end.error ?? null,
    toolCalls: state.toolCalls,
    budgetReached: end.budgetReached ?? null,
    session: sessionOf(state),
    subagents: [...state.subagents],
  };
  log.info(`session ${result.termination} after ${pluralize(result.iterations, 'iteration')}`, {
    termination: result.termination,
    iterations: result.iterations,
    tokens: result.tokens,
    costUsd: result.cash?.total ?? null,
    elapsedMs: result.elapsedMs,
  });
  state.emit({
    type: 'SessionCompleted',
    sessionUuid: state.uuid,
    termination: result.termination,
    iterations: result.iterations,
    tokens: result.tokens,
    cash: result.cash,
    elapsedMs: result.elapsedMs,
    occurredAt: new Date().toISOString(),
  });
  return result;
};

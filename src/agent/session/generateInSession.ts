import type { BrainAtomGenerateInput, BrainAtomGeneration } from '../../core/contract/BrainAtom.js';
import { checkBudget, type BhrainBudgetReached } from './checkBudget.js';
import { addSessionSpend, type SessionState } from './SessionState.js';

/**
 * .what = the budget limit the session tree has reached, or null: checked over what the tree spent so far (and the
 *         caller before it); once the wall-time timer fired, the wall time is up whatever a clock read a moment early says
 */
export const budgetReachedOf = (state: SessionState): BhrainBudgetReached | null => {
  const { limits } = state.config;
  const spent = state.ledger.spentNow();
  const reached = checkBudget({ spent, budget: limits });
  if (reached || !state.deadlinePassed || limits.maxWallTimeMs === undefined) return reached;
  return { limit: 'maxWallTimeMs', spent: Math.max(spent.elapsedMs, limits.maxWallTimeMs), cap: limits.maxWallTimeMs };
};

/**
 * .what = one request to the session's atom: retries announced as events, the spend counted in the session and in the
 *         tree's ledger
 * .why = a signal per request: what the SDK hangs on it goes with the request, instead of piling up on the session's
 */
export const generateInSession = async (state: SessionState, request: BrainAtomGenerateInput): Promise<BrainAtomGeneration> => {
  const { stop } = state;
  const requestStop = new AbortController();
  const forward = () => requestStop.abort(stop.signal.reason);
  if (stop.signal.aborted) forward();
  else stop.signal.addEventListener('abort', forward, { once: true });
  try {
    const generation = await state.config.atom.generate(
      {
        ...request,
        onRetry: (retry) => state.emit({ type: 'RequestRetried', sessionUuid: state.uuid, ...retry, occurredAt: new Date().toISOString() }),
      },
      { ...state.context, signal: requestStop.signal },
    );
    addSessionSpend(state, generation);
    state.ledger.add(generation);
    return generation;
  } finally {
    stop.signal.removeEventListener('abort', forward);
  }
};

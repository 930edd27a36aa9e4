import type { BrainCash, BrainTokens } from '../../core/contract/BrainOutput.js';
import { addRequestSpend, addSpend, emptySpend, type BhrainSpend } from './checkBudget.js';

/**
 * .what = the spend of one session tree toward its budget: the caller's spend before it, every request of the session
 *         and of its subagents as they are made, and the wall time since the root session started
 * .why = a parent and its children (several at once) share one budget; each checks it before its own requests, so a
 *        child's spend stops its siblings and its parent at the cap, not after they finish
 */
export interface BhrainSpendLedger {
  /** counts one request to the model */
  add: (request: { tokens: BrainTokens; cash: BrainCash | null }) => void;
  /** what was spent so far, the caller's spend before the root session included */
  spentNow: () => BhrainSpend;
}

/** .what = a ledger that starts counting now, on top of what was spent before */
export const genSpendLedger = (input: { spentBefore?: BhrainSpend; startedAtMs: number }): BhrainSpendLedger => {
  const before = input.spentBefore ?? emptySpend();
  let spent = emptySpend();
  return {
    add: (request) => void (spent = addRequestSpend(spent, request)),
    spentNow: () => addSpend(before, { ...spent, elapsedMs: performance.now() - input.startedAtMs }),
  };
};

import type { BrainCash, BrainTokens } from '../../core/contract/BrainOutput.js';
import { addCash, addTokens, emptyTokens } from '../../core/contract/tokens.js';

/** .what = the spend limits of a session: USD, tokens (input + output + cache, summed) and wall time */
export interface BhrainBudget {
  maxBudgetUsd?: number;
  maxTokens?: number;
  maxWallTimeMs?: number;
}

/**
 * .what = what a session has spent so far, toward its budget: every request to the model, compaction summaries included
 * .note = cash is null once a request's price was unknown
 */
export interface BhrainSpend {
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  /** requests sent to the model */
  requests: number;
}

/** .what = the limit a session stopped at: which one, what was spent toward it, and its cap */
export interface BhrainBudgetReached {
  limit: keyof BhrainBudget;
  /** null when the spend toward it is unknown (a USD cap over a request without a price) */
  spent: number | null;
  cap: number;
}

const ZERO_CASH: BrainCash = { currency: 'USD', total: 0, deets: { input: 0, output: 0, cache: { get: 0, set: 0 } } };

/** .what = nothing spent yet */
export const emptySpend = (): BhrainSpend => ({ tokens: emptyTokens(), cash: ZERO_CASH, elapsedMs: 0, requests: 0 });

/** .what = a spend with one more request's usage added */
export const addRequestSpend = (spend: BhrainSpend, request: { tokens: BrainTokens; cash: BrainCash | null }): BhrainSpend => ({
  ...spend,
  tokens: addTokens(spend.tokens, request.tokens),
  cash: addCash(spend.cash, request.cash),
  requests: spend.requests + 1,
});

/** .what = the sum of two spends, e.g. what came before a session and what it spent itself */
export const addSpend = (a: BhrainSpend, b: BhrainSpend): BhrainSpend => ({
  tokens: addTokens(a.tokens, b.tokens),
  cash: addCash(a.cash, b.cash),
  elapsedMs: a.elapsedMs + b.elapsedMs,
  requests: a.requests + b.requests,
});

/** .what = the tokens a budget counts: input, output and both cache parts */
export const sumTokens = (tokens: BrainTokens): number => tokens.input + tokens.output + tokens.cache.get + tokens.cache.set;

/**
 * .what = the first limit the spend has reached, or null when another request may be sent
 * .why = checked before every request to the model, so a runaway loop stops within one request of its cap;
 *        a USD cap over a spend whose price is unknown counts as reached (fail closed: it cannot be enforced)
 */
export const checkBudget = (input: { spent: BhrainSpend; budget: BhrainBudget }): BhrainBudgetReached | null => {
  const { spent, budget } = input;
  if (budget.maxBudgetUsd !== undefined && (spent.cash === null || spent.cash.total >= budget.maxBudgetUsd))
    return { limit: 'maxBudgetUsd', spent: spent.cash?.total ?? null, cap: budget.maxBudgetUsd };
  if (budget.maxTokens !== undefined && sumTokens(spent.tokens) >= budget.maxTokens)
    return { limit: 'maxTokens', spent: sumTokens(spent.tokens), cap: budget.maxTokens };
  if (budget.maxWallTimeMs !== undefined && spent.elapsedMs >= budget.maxWallTimeMs)
    return { limit: 'maxWallTimeMs', spent: spent.elapsedMs, cap: budget.maxWallTimeMs };
  return null;
};

/** .what = the CLI flag and library field of each limit, as messages name them */
const LIMIT_NAMES: Record<keyof BhrainBudget, string> = {
  maxBudgetUsd: '--max-budget-usd, limits.maxBudgetUsd',
  maxTokens: '--max-tokens, limits.maxTokens',
  maxWallTimeMs: '--max-wall-time, limits.maxWallTimeMs',
};

const usd = (amount: number) => `$${amount.toFixed(amount < 0.01 ? 6 : 4)}`;

/** .what = one line saying which limit was hit, the amount spent toward it and its cap */
export const describeBudgetReached = (reached: BhrainBudgetReached): string => {
  const names = LIMIT_NAMES[reached.limit];
  if (reached.limit === 'maxBudgetUsd')
    return reached.spent === null
      ? `the cost budget of ${usd(reached.cap)} (${names}) cannot be checked: a request's price is unknown`
      : `the cost budget was reached: ${usd(reached.spent)} spent of a cap of ${usd(reached.cap)} (${names})`;
  if (reached.limit === 'maxTokens')
    return `the token budget was reached: ${reached.spent} tokens spent (input, output and cache) of a cap of ${reached.cap} (${names})`;
  return `the wall-time budget was reached: ${((reached.spent ?? 0) / 1000).toFixed(1)} s elapsed of a cap of ${(reached.cap / 1000).toFixed(1)} s (${names})`;
};

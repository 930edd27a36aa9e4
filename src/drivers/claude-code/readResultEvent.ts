import { computeCash } from '../../providers/computeCash.js';
import type { BrainModelPrice } from '../../core/contract/BrainAtom.js';
import type { BrainCash, BrainTokens } from '../../core/contract/BrainOutput.js';

/** .what = the fields of the claude CLI's stream-json `result` event that bhrain reads */
export interface ClaudeResultEvent {
  type: 'result';
  subtype: string;
  is_error: boolean;
  result?: string;
  session_id: string;
  uuid?: string;
  duration_ms?: number;
  total_cost_usd?: number;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  model_usage_since_last_result?: Record<
    string,
    { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheCreationInputTokens?: number; costUSD?: number }
  >;
  api_error_status?: number | null;
}

/**
 * .what = the per-call tokens and cost of one result event
 * .why = the CLI's `usage` and `total_cost_usd` accumulate over the process; `model_usage_since_last_result` is this call
 *        alone, so it is preferred; the previous totals are subtracted otherwise
 */
export const readResultMetrics = (
  event: ClaudeResultEvent,
  previous: { tokens: BrainTokens; usd: number } | null,
  price: BrainModelPrice | null,
): { tokens: BrainTokens; cash: BrainCash | null; totals: { tokens: BrainTokens; usd: number } } => {
  const usage = event.usage ?? {};
  const totals = {
    tokens: {
      input: usage.input_tokens ?? 0,
      output: usage.output_tokens ?? 0,
      cache: { get: usage.cache_read_input_tokens ?? 0, set: usage.cache_creation_input_tokens ?? 0 },
    },
    usd: event.total_cost_usd ?? 0,
  };
  const perModel = Object.values(event.model_usage_since_last_result ?? {});
  const tokens: BrainTokens = perModel.length
    ? perModel.reduce<BrainTokens>(
        (sum, model) => ({
          input: sum.input + (model.inputTokens ?? 0),
          output: sum.output + (model.outputTokens ?? 0),
          cache: { get: sum.cache.get + (model.cacheReadInputTokens ?? 0), set: sum.cache.set + (model.cacheCreationInputTokens ?? 0) },
        }),
        { input: 0, output: 0, cache: { get: 0, set: 0 } },
      )
    : {
        input: totals.tokens.input - (previous?.tokens.input ?? 0),
        output: totals.tokens.output - (previous?.tokens.output ?? 0),
        cache: {
          get: totals.tokens.cache.get - (previous?.tokens.cache.get ?? 0),
          set: totals.tokens.cache.set - (previous?.tokens.cache.set ?? 0),
        },
      };
  const usd = perModel.length ? perModel.reduce((sum, model) => sum + (model.costUSD ?? 0), 0) : totals.usd - (previous?.usd ?? 0);
  const parts = computeCash(tokens, price);
  const cash: BrainCash | null =
    event.total_cost_usd === undefined && !parts
      ? null
      : { currency: 'USD', total: Math.round(usd * 1e9) / 1e9, deets: parts?.deets ?? { input: 0, output: 0, cache: { get: 0, set: 0 } } };
  return { tokens, cash, totals };
};

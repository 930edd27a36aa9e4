import type { BrainCash, BrainTokens } from './BrainOutput.js';

/** .what = zero tokens, a fresh accumulator */
export const emptyTokens = (): BrainTokens => ({ input: 0, output: 0, cache: { get: 0, set: 0 } });

/** .what = the sum of two token counts */
export const addTokens = (a: BrainTokens, b: BrainTokens): BrainTokens => ({
  input: a.input + b.input,
  output: a.output + b.output,
  cache: { get: a.cache.get + b.cache.get, set: a.cache.set + b.cache.set },
});

/** .what = the sum of two costs; unknown (null) when either is unknown, so a partial price is never shown as total */
export const addCash = (a: BrainCash | null, b: BrainCash | null): BrainCash | null => {
  if (!a || !b) return null;
  const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
  return {
    currency: 'USD',
    total: round(a.total + b.total),
    deets: {
      input: round(a.deets.input + b.deets.input),
      output: round(a.deets.output + b.deets.output),
      cache: { get: round(a.deets.cache.get + b.deets.cache.get), set: round(a.deets.cache.set + b.deets.cache.set) },
    },
  };
};

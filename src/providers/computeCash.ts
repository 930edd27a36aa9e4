import type { BrainModelPrice } from '../core/contract/BrainAtom.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';

const round = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/** .what = the USD cost of a call's tokens at a model's price; null when the price is unknown */
export const computeCash = (tokens: BrainTokens, price: BrainModelPrice | null): BrainCash | null => {
  if (!price) return null;
  const deets = {
    input: round((tokens.input * price.input) / 1e6),
    output: round((tokens.output * price.output) / 1e6),
    cache: {
      get: round((tokens.cache.get * price.cacheGet) / 1e6),
      set: round((tokens.cache.set * price.cacheSet) / 1e6),
    },
  };
  return {
    currency: 'USD',
    total: round(deets.input + deets.output + deets.cache.get + deets.cache.set),
    deets,
  };
};

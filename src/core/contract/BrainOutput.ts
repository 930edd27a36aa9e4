import type { BrainEpisode } from './BrainEpisode.js';
import type { BrainSeries } from './BrainSeries.js';

/**
 * .what = token counts of one call, in the Anthropic convention
 * .note = input counts uncached input only; cache.get are tokens read from the prompt cache, cache.set tokens written to it
 */
export interface BrainTokens {
  input: number;
  output: number;
  cache: { get: number; set: number };
  /** of output, the tokens the model reasoned in, when the supplier reports them apart (openai's reasoning_tokens) */
  reasoning?: number;
}

/** .what = a duration, as an object with its unit in the key */
export interface BrainDuration {
  milliseconds: number;
}

/** .what = what a call cost in USD, in total and by part */
export interface BrainCash {
  currency: 'USD';
  total: number;
  deets: { input: number; output: number; cache: { get: number; set: number } };
}

/**
 * .what = size and cost of one brain call (per call, never cumulative)
 * .why = the caller can attribute tokens, time and money to each task
 */
export interface BrainOutputMetrics {
  size: {
    tokens: BrainTokens;
    chars: { input: number; output: number; cache: { get: number; set: number } };
  };
  cost: {
    time: BrainDuration;
    /** null when the supplier's model has no known price (e.g. a self-hosted qwen) */
    cash: BrainCash | null;
  };
}

/**
 * .what = the result of every .ask() and .act(): the output, the NEW episode and series refs, and metrics
 * .why = refs are always returned so a caller can persist, branch or revive from this exact point
 */
export interface BrainOutput<TOutput = string, TSeries extends BrainSeries | null = BrainSeries | null> {
  output: TOutput;
  episode: BrainEpisode;
  series: TSeries;
  metrics: BrainOutputMetrics;
}

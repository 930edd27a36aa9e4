import type { BrainRetryPolicy } from '../core/contract/BrainContext.js';

/**
 * .what = defaults that change atom behaviour, in one place
 */

/** bounded retries: up to 4 more attempts, exponential from 1 s, each wait at most 30 s, 90 s of waiting in all */
export const DEFAULT_RETRY_POLICY: BrainRetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxTotalWaitMs: 90_000,
};

/** per-request timeout for a supplier call: the wait for its response to start */
export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;

/** the longest silence inside a streamed response before it counts as stalled (and is retried) */
export const DEFAULT_STREAM_IDLE_MS = 120_000;

/** output budget of one generation when the caller sets none */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8_192;

/** HTTP statuses worth retrying: timeout, conflict, rate limit, server errors, overloaded */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

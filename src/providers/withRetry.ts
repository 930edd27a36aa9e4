import type { BrainLog, BrainRetryPolicy } from '../core/contract/BrainContext.js';
import { AbortedError, BhrainError, SupplierUnavailableError } from '../core/contract/errors.js';
import { RETRYABLE_STATUSES } from './constants.js';

/** .what = the status and headers of a failed supplier call, whichever SDK threw it */
const readHttp = (error: unknown): { status?: number; headers?: { get(name: string): string | null } } => {
  const candidate = error as { status?: unknown; headers?: unknown };
  return {
    status: typeof candidate?.status === 'number' ? candidate.status : undefined,
    headers:
      candidate?.headers && typeof (candidate.headers as { get?: unknown }).get === 'function'
        ? (candidate.headers as { get(name: string): string | null })
        : undefined,
  };
};

/** .what = the wait a supplier asked for, from retry-after-ms or retry-after (seconds or an HTTP date) */
export const readRetryAfterMs = (error: unknown, now = Date.now()): number | null => {
  const { headers } = readHttp(error);
  const ms = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers?.get('retry-after');
  if (!raw) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
};

/**
 * .what = whether a failure is transient: a retryable status, or no status at all (connection reset, cut stream, bad body)
 * .note = our own typed errors and aborts are never retried
 */
export const isRetryable = (error: unknown): boolean => {
  if (error instanceof BhrainError) return false;
  const name = (error as { name?: string })?.name;
  if (name === 'AbortError' || name === 'APIUserAbortError') return false;
  const { status } = readHttp(error);
  return status === undefined ? true : RETRYABLE_STATUSES.has(status);
};

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const describeFailure = (error: unknown): string => {
  const { status } = readHttp(error);
  const message = (error as Error)?.message ?? String(error);
  return status ? `HTTP ${status}: ${message}` : message;
};

/** .what = a retry about to happen: the attempt it will be (2 = the first retry), the wait before it, and why */
export interface SupplierRetry {
  attempt: number;
  delayMs: number;
  /** the last attempt's failure: `HTTP <status>: <message>`, or the error's text */
  reason: string;
}

/**
 * .what = runs a supplier call with bounded retries of transient failures, honouring retry-after
 * .why = the SDKs' own retries honour retry-after without a cap; ours are bounded in count and in total wait
 * .note = exhausted retries say what a CLI user can do (wait, or pass --timeout-ms / retry flags where they exist) and,
 *         in parentheses, the library field a caller would change
 */
export const withRetry = async <T>(input: {
  run: (attempt: number) => Promise<T>;
  policy: BrainRetryPolicy;
  /** maps a non-retryable failure to a typed error */
  mapError: (error: unknown) => Error;
  /** names the supplier in messages, e.g. 'claude/sonnet' */
  supplier: string;
  log: BrainLog;
  signal?: AbortSignal;
  /**
   * called once per retry, before its wait: to discard text streamed by the failed attempt, or to report the retry;
   * a hook that throws is logged, and the retry goes on
   */
  onRetry?: (retry: SupplierRetry) => void;
}): Promise<{ value: T; attempts: number }> => {
  // an abort is the caller's decision: whatever the failure looks like afterwards, it is reported as an abort
  const aborted = (cause: unknown) =>
    new AbortedError(`${input.supplier}: the call was interrupted (Ctrl-C, SIGTERM, or the caller's abort signal)`, { cause });
  let waitedMs = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await input.run(attempt), attempts: attempt };
    } catch (error) {
      if (input.signal?.aborted) throw aborted(error);
      if (!isRetryable(error)) throw input.mapError(error);
      const retriesLeft = input.policy.maxRetries - (attempt - 1);
      if (retriesLeft <= 0)
        throw new SupplierUnavailableError(
          `${input.supplier} failed ${attempt} times in a row (last: ${describeFailure(error)}); the supplier is unreachable or overloaded. Try again later (library: raise context.retry.maxRetries)`,
          attempt,
          { cause: error },
        );
      const askedMs = readRetryAfterMs(error);
      const backoffMs = Math.min(input.policy.maxDelayMs, input.policy.baseDelayMs * 2 ** (attempt - 1));
      const delayMs = askedMs ?? Math.round(backoffMs * (0.8 + Math.random() * 0.2));
      const budgetLeftMs = input.policy.maxTotalWaitMs - waitedMs;
      if (delayMs > budgetLeftMs)
        throw new SupplierUnavailableError(
          `${input.supplier} failed (${describeFailure(error)}) and ${askedMs !== null ? 'asked to retry after' : 'the next backoff is'} ${(delayMs / 1000).toFixed(1)} s, beyond the remaining retry budget of ${(budgetLeftMs / 1000).toFixed(1)} s. Try again in ${Math.ceil(delayMs / 1000)} s or later (library: raise context.retry.maxTotalWaitMs)`,
          attempt,
          { cause: error },
        );
      const reason = describeFailure(error);
      input.log.warn(`${input.supplier}: attempt ${attempt} failed (${reason}); retry in ${delayMs} ms`, {
        attempt,
        delayMs,
      });
      try {
        input.onRetry?.({ attempt: attempt + 1, delayMs, reason });
      } catch (hookError) {
        input.log.error(`${input.supplier}: the onRetry hook threw: ${(hookError as Error)?.message ?? hookError}; the retry goes on`);
      }
      await sleep(delayMs, input.signal).catch((error) => {
        throw aborted(error);
      });
      waitedMs += delayMs;
    }
  }
};

import { WebSearchError } from './WebSearchError.js';

// a short, single-line excerpt of a body, for error messages
const excerptOf = (text: string, maxChars = 200): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxChars ? `${flat.slice(0, maxChars)}…` : flat || '(empty body)';
};

// the low-level reason of a failed fetch: undici puts it on error.cause (ECONNREFUSED, ENOTFOUND, ...)
const reasonOf = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
};

/**
 * .what = one HTTP call to a search provider that returns its parsed JSON, or throws a WebSearchError saying what failed
 * .why = connection, timeout, status and parse failures read the same for every provider
 */
export const fetchProviderJson = async (
  input: {
    /** the provider's name, as the model reads it */
    providerLabel: string;
    url: string;
    /** the url without its query, safe and short to show */
    shownUrl: string;
    init: RequestInit;
    timeoutMs: number;
  },
  context: { signal?: AbortSignal },
): Promise<unknown> => {
  const timeoutSignal = AbortSignal.timeout(input.timeoutMs);
  const signal = context.signal ? AbortSignal.any([timeoutSignal, context.signal]) : timeoutSignal;
  // one try covers the body too: a timeout can strike while the body streams in
  let status = 0;
  let body: string;
  try {
    const response = await fetch(input.url, { ...input.init, signal });
    status = response.status;
    body = await response.text();
    if (!response.ok)
      throw new WebSearchError(
        `${input.providerLabel} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: ${excerptOf(body)}`,
      );
  } catch (error) {
    if (error instanceof WebSearchError) throw error;
    if (context.signal?.aborted) throw new WebSearchError('the search was aborted by the caller');
    if (timeoutSignal.aborted)
      throw new WebSearchError(`${input.providerLabel} did not answer within ${input.timeoutMs} ms (${input.shownUrl})`);
    throw new WebSearchError(
      status
        ? `reading the answer of ${input.providerLabel} failed (${reasonOf(error)})`
        : `could not reach ${input.providerLabel} at ${input.shownUrl} (${reasonOf(error)})`,
    );
  }
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new WebSearchError(`${input.providerLabel} answered with invalid JSON: ${excerptOf(body)}`);
  }
};

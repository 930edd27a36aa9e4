/**
 * .what = a failed call to a search provider, with a message that says what failed
 * .why = the toolbox turns it into an error result the model reads; it never leaves the toolbox
 */
export class WebSearchError extends Error {
  public override readonly name = 'WebSearchError';
}

/** .what = one web search result, normalized across providers */
export interface WebSearchHit {
  readonly title: string;
  readonly url: string;
  /** plain text, whitespace collapsed, cut to a few hundred characters */
  readonly snippet: string;
}

/** .what = the search providers websearch can call */
export type WebSearchProviderName = 'tavily' | 'brave';

/**
 * .what = a result's text as one line, cut at a word boundary to at most maxChars (with an ellipsis)
 * .why = ten full page extracts would flood the context; a few hundred characters is enough to decide what to open
 */
export const toSnippet = (text: string, maxChars = 300): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  const cut = flat.slice(0, maxChars - 1);
  const lastSpace = cut.lastIndexOf(' ');
  // a word boundary only when it keeps most of the text
  return `${lastSpace > maxChars * 0.7 ? cut.slice(0, lastSpace) : cut}…`;
};

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

/**
 * .what = searches the web through Tavily: POST {baseUrl}/search with a bearer key
 * .why = Tavily answers with page extracts made for LLMs, so it is the preferred provider
 */
export const searchTavily = async (
  input: { query: string; maxResults: number },
  context: { baseUrl: string; apiKey: string; timeoutMs: number; signal?: AbortSignal },
): Promise<WebSearchHit[]> => {
  const url = `${context.baseUrl.replace(/\/+$/, '')}/search`;
  const answer = await fetchProviderJson(
    {
      providerLabel: 'Tavily',
      url,
      shownUrl: url,
      init: {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          Authorization: `Bearer ${context.apiKey}`,
        },
        body: JSON.stringify({ query: input.query, max_results: input.maxResults }),
      },
      timeoutMs: context.timeoutMs,
    },
    { signal: context.signal },
  );
  const results = (answer as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new WebSearchError('Tavily answered with an unexpected shape: no results array');
  return results
    .filter((item): item is { title?: unknown; url: string; content?: unknown } => typeof item?.url === 'string')
    .slice(0, input.maxResults)
    .map((item) => ({
      title: typeof item.title === 'string' && item.title.trim() ? toSnippet(item.title, 200) : '(untitled)',
      url: item.url,
      snippet: typeof item.content === 'string' ? toSnippet(item.content) : '',
    }));
};

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'", '#x27': "'" };

// Brave marks matches with <strong> and escapes entities; the model wants plain text
const toPlainText = (html: string): string =>
  html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|apos|nbsp|#39|#x27);/g, (_, name: string) => entities[name] ?? '');

/**
 * .what = searches the web through Brave Search: GET {baseUrl}/res/v1/web/search?q=&count= with a subscription token
 * .why = the fallback provider when no Tavily key is set
 */
export const searchBrave = async (
  input: { query: string; maxResults: number },
  context: { baseUrl: string; apiKey: string; timeoutMs: number; signal?: AbortSignal },
): Promise<WebSearchHit[]> => {
  const shownUrl = `${context.baseUrl.replace(/\/+$/, '')}/res/v1/web/search`;
  const query = new URLSearchParams({ q: input.query, count: String(input.maxResults) });
  const answer = await fetchProviderJson(
    {
      providerLabel: 'Brave Search',
      url: `${shownUrl}?${query}`,
      shownUrl,
      init: { method: 'GET', headers: { Accept: 'application/json', 'X-Subscription-Token': context.apiKey } },
      timeoutMs: context.timeoutMs,
    },
    { signal: context.signal },
  );
  if (answer === null || typeof answer !== 'object')
    throw new WebSearchError('Brave Search answered with an unexpected shape: not a JSON object');
  // Brave leaves out the web section entirely when nothing matched
  const web = (answer as { web?: { results?: unknown } }).web;
  if (web === undefined) return [];
  if (!Array.isArray(web?.results)) throw new WebSearchError('Brave Search answered with an unexpected shape: no web.results array');
  return web.results
    .filter((item): item is { title?: unknown; url: string; description?: unknown } => typeof item?.url === 'string')
    .slice(0, input.maxResults)
    .map((item) => ({
      title: typeof item.title === 'string' && item.title.trim() ? toSnippet(toPlainText(item.title), 200) : '(untitled)',
      url: item.url,
      snippet: typeof item.description === 'string' ? toSnippet(toPlainText(item.description)) : '',
    }));
};

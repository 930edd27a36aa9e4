import { fetchProviderJson } from './fetchProviderJson.js';
import { toSnippet } from './toSnippet.js';
import type { WebSearchHit } from './WebSearchHit.js';
import { WebSearchError } from './WebSearchError.js';

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

import { fetchProviderJson } from './fetchProviderJson.js';
import { toSnippet } from './toSnippet.js';
import type { WebSearchHit } from './WebSearchHit.js';
import { WebSearchError } from './WebSearchError.js';

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

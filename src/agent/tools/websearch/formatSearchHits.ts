import type { WebSearchHit } from './WebSearchHit.js';

/**
 * .what = renders search hits as the numbered list the model reads, ending with the provider's name
 * .why = title, url and snippet on their own lines let the model cite a source or pick a page to fetch
 */
export const formatSearchHits = (input: { query: string; hits: readonly WebSearchHit[]; providerLabel: string }): string => {
  if (input.hits.length === 0)
    return `no results for ${JSON.stringify(input.query)}. Try rephrasing: fewer or different keywords, or a broader query.\n(searched with ${input.providerLabel})`;
  const items = input.hits.map((hit, index) =>
    [`${index + 1}. ${hit.title}`, `   ${hit.url}`, ...(hit.snippet ? [`   ${hit.snippet}`] : [])].join('\n'),
  );
  return `${items.join('\n\n')}\n\n(results from ${input.providerLabel})`;
};

import { SEARCH_SUPPLIER_TABLE } from '../../../core/contract/supplierTable.js';
import type { BrainToolCall } from '../../../core/contract/BrainMessage.js';
import type { BhrainToolBox, BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { deferInput, makeTool, type BhrainTool, type BhrainToolOutput, type BhrainToolResult } from '../../tool/makeTool.js';
import { toolBoxOf } from '../../tool/executeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { searchBrave, searchTavily, WebSearchError, type WebSearchHit, type WebSearchProviderName } from './searchProviders.js';

/**
 * .what = a websearch tool result that also carries the hits as data
 * .why = the model reads the text; a caller (a test, a ui) can use the structured list without parsing it
 */
export interface WebsearchToolResult extends BhrainToolResult {
  /** empty on no results and on failure */
  readonly results: readonly WebSearchHit[];
  /** which provider answered, or was asked when it failed */
  readonly provider?: WebSearchProviderName;
}

/**
 * .what = the websearch toolbox: a BhrainToolBox whose results also carry the hits as data
 * .why = it plugs in wherever a BhrainToolBox does, while a direct caller keeps the typed result list
 */
export type WebsearchToolBox = Omit<BhrainToolBox, 'execute'> & {
  execute: (input: { call: BrainToolCall }, context: BhrainToolContext) => Promise<WebsearchToolResult>;
  tools: readonly BhrainTool[];
};

// each provider: where its key and base url are read from, its default endpoint, and how to call it
const providers = {
  tavily: { ...SEARCH_SUPPLIER_TABLE.tavily, search: searchTavily },
  brave: { ...SEARCH_SUPPLIER_TABLE.brave, search: searchBrave },
} as const;

const maxResultsLimit = 20;

/** .what = websearch's input: the query, and how many results to return */
export const websearchInput = deferInput(
  {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        description: 'What to search for, as you would type it into a search engine.',
      },
      max_results: {
        type: 'integer',
        minimum: 1,
        maximum: maxResultsLimit,
        description: `How many results to return, 1 to ${maxResultsLimit}. Default 5.`,
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async () => (await import('../toolInputs.js')).websearchZodInput(maxResultsLimit),
);

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

/** .what = what websearch answers: the text the model reads, and the hits as data */
type WebsearchOutput = BhrainToolOutput & { results: readonly WebSearchHit[]; provider?: WebSearchProviderName };

/**
 * .what = a toolbox with one tool, websearch: searches the web through Tavily or Brave and returns titles, urls and snippets
 * .why = the brain's window on what is not in the repo; a failure is a result the model can work around, never a crash.
 *        Its effect is read: it changes nothing, so read-only sessions and subagents may search
 */
export const genWebsearchToolBox = (
  options: {
    /** forces one provider; by default Tavily when its key variable is set, else Brave when its key is */
    provider?: WebSearchProviderName;
    /** per request, connect to last body byte */
    timeoutMs?: number;
  } = {},
): WebsearchToolBox => {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const websearch = makeTool({
    name: 'websearch',
    description: loadToolDescription(new URL('./websearch.txt', import.meta.url)),
    input: websearchInput,
    effect: 'read',
    execute: async ({ query, max_results: maxResults = 5 }, context): Promise<WebsearchOutput> => {
      const failure = (output: string, provider?: WebSearchProviderName): WebsearchOutput => ({
        success: false,
        output,
        results: [],
        ...(provider ? { provider } : {}),
      });
      // an empty key counts as unset
      const keyOf = (name: WebSearchProviderName): string | undefined => context.env[providers[name].keyEnvVar] || undefined;
      const providerName: WebSearchProviderName | undefined =
        options.provider ?? (keyOf('tavily') ? 'tavily' : keyOf('brave') ? 'brave' : undefined);
      if (!providerName)
        return failure(
          `websearch is not configured: set ${providers.tavily.keyEnvVar} (Tavily) or ${providers.brave.keyEnvVar} (Brave Search API) in the environment. Proceed without web results.`,
        );
      const provider = providers[providerName];
      const apiKey = keyOf(providerName);
      if (!apiKey)
        return failure(
          `websearch is configured to use ${provider.label}, but ${provider.keyEnvVar} is not set: set it in the environment. Proceed without web results.`,
          providerName,
        );
      context.log.debug('websearch: searching', { provider: providerName, query, maxResults });
      try {
        const hits = await provider.search(
          { query, maxResults },
          { baseUrl: context.env[provider.urlEnvVar] || provider.defaultUrl, apiKey, timeoutMs, signal: context.signal },
        );
        return {
          success: true,
          output: formatSearchHits({ query, hits, providerLabel: provider.label }),
          results: hits,
          provider: providerName,
        };
      } catch (error) {
        // a WebSearchError says what failed; anything else is a bug, still reported as a result
        const reason = error instanceof WebSearchError ? error.message : `unexpected error: ${(error as Error).message}`;
        context.log.warn('websearch: failed', { provider: providerName, reason });
        return failure(
          `websearch failed: ${reason}. You may retry (later, or with a different query), or proceed without web results.`,
          providerName,
        );
      }
    },
  });
  const box = toolBoxOf({ name: 'websearch', tools: [websearch] });
  return {
    name: box.name,
    tools: box.tools,
    get definitions() {
      return box.definitions;
    },
    // a call answered before the search (an unknown tool, invalid input) carries no hits either
    execute: async (input, context) => ({ results: [], ...(await box.execute(input, context)) }),
  };
};

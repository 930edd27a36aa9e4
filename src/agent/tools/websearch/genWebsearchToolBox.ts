import type { BrainToolDefinition } from '../../../core/contract/BrainMessage.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { formatSearchHits } from './formatSearchHits.js';
import { searchBrave } from './searchBrave.js';
import { searchTavily } from './searchTavily.js';
import { WebSearchError } from './WebSearchError.js';
import type { WebSearchProviderName } from './WebSearchProviderName.js';
import type { WebsearchToolBox } from './WebsearchToolBox.js';
import type { WebsearchToolResult } from './WebsearchToolResult.js';

// each provider: where its key and base url are read from, its default endpoint, and how to call it
const providers = {
  tavily: {
    label: 'Tavily',
    keyVar: 'TAVILY_API_KEY',
    baseUrlVar: 'TAVILY_BASE_URL',
    defaultBaseUrl: 'https://api.tavily.com',
    search: searchTavily,
  },
  brave: {
    label: 'Brave Search',
    keyVar: 'BRAVE_API_KEY',
    baseUrlVar: 'BRAVE_BASE_URL',
    defaultBaseUrl: 'https://api.search.brave.com',
    search: searchBrave,
  },
} as const;

const maxResultsLimit = 20;

/**
 * .what = a toolbox with one tool, websearch: searches the web through Tavily or Brave and returns titles, urls and snippets
 * .why = the brain's window on what is not in the repo; a failure is a result the model can work around, never a crash
 */
export const genWebsearchToolBox = (
  options: {
    /** forces one provider; by default Tavily when TAVILY_API_KEY is set, else Brave when BRAVE_API_KEY is set */
    provider?: WebSearchProviderName;
    /** per request, connect to last body byte */
    timeoutMs?: number;
  } = {},
): WebsearchToolBox => {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const definition: BrainToolDefinition = {
    name: 'websearch',
    description: loadToolDescription(new URL('./websearch.txt', import.meta.url)),
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to search for, as you would type it into a search engine.' },
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
  };

  return {
    name: 'websearch',
    definitions: [definition],
    execute: async ({ call }, context): Promise<WebsearchToolResult> => {
      const failure = (output: string, provider?: WebSearchProviderName): WebsearchToolResult => ({
        callId: call.id,
        success: false,
        output,
        results: [],
        ...(provider ? { provider } : {}),
      });
      if (call.name !== 'websearch') return failure(`the websearch toolbox has no tool named ${call.name}; its only tool is websearch`);
      if (call.inputError) return failure(call.inputError);
      const { query, max_results: requestedMaxResults } = call.input;
      if (typeof query !== 'string' || query.trim() === '')
        return failure('websearch needs a non-empty string `query`, e.g. {"query": "vitest 4 release notes"}');
      if (
        requestedMaxResults !== undefined &&
        (typeof requestedMaxResults !== 'number' ||
          !Number.isInteger(requestedMaxResults) ||
          requestedMaxResults < 1 ||
          requestedMaxResults > maxResultsLimit)
      )
        return failure(`max_results must be an integer from 1 to ${maxResultsLimit}, got ${JSON.stringify(requestedMaxResults)}`);
      const maxResults = requestedMaxResults ?? 5;

      // an empty key counts as unset
      const keyOf = (name: WebSearchProviderName): string | undefined => context.env[providers[name].keyVar] || undefined;
      const providerName: WebSearchProviderName | undefined =
        options.provider ?? (keyOf('tavily') ? 'tavily' : keyOf('brave') ? 'brave' : undefined);
      if (!providerName)
        return failure(
          'websearch is not configured: set TAVILY_API_KEY (Tavily) or BRAVE_API_KEY (Brave Search API) in the environment. Proceed without web results.',
        );
      const provider = providers[providerName];
      const apiKey = keyOf(providerName);
      if (!apiKey)
        return failure(
          `websearch is configured to use ${provider.label}, but ${provider.keyVar} is not set: set it in the environment. Proceed without web results.`,
          providerName,
        );

      context.log.debug('websearch: searching', { provider: providerName, query, maxResults });
      try {
        const hits = await provider.search(
          { query, maxResults },
          {
            baseUrl: context.env[provider.baseUrlVar] || provider.defaultBaseUrl,
            apiKey,
            timeoutMs,
            signal: context.signal,
          },
        );
        return {
          callId: call.id,
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
  };
};

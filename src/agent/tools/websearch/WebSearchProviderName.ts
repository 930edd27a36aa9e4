/** .what = the search providers websearch can call */
export type WebSearchProviderName = 'tavily' | 'brave';

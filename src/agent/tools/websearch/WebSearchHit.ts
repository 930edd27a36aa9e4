/** .what = one web search result, normalized across providers */
export interface WebSearchHit {
  readonly title: string;
  readonly url: string;
  /** plain text, whitespace collapsed, cut to a few hundred characters */
  readonly snippet: string;
}

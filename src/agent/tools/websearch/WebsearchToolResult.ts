import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import type { WebSearchHit } from './WebSearchHit.js';
import type { WebSearchProviderName } from './WebSearchProviderName.js';

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

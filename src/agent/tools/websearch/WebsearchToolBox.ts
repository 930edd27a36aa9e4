import type { BrainToolCall } from '../../../core/contract/BrainMessage.js';
import type { BhrainToolBox, BhrainToolContext } from '../../tool/BhrainToolBox.js';
import type { WebsearchToolResult } from './WebsearchToolResult.js';

/**
 * .what = the websearch toolbox: a BhrainToolBox whose results also carry the hits as data
 * .why = it plugs in wherever a BhrainToolBox does, while a direct caller keeps the typed result list
 */
export type WebsearchToolBox = Omit<BhrainToolBox, 'execute'> & {
  execute: (input: { call: BrainToolCall }, context: BhrainToolContext) => Promise<WebsearchToolResult>;
};

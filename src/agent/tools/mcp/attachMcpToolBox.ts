import { silentLog, type BrainLog } from '../../../core/contract/BrainContext.js';
import type { Bhrain } from '../../genBhrain.js';
import type { McpToolBox } from './genMcpToolBox.js';

/**
 * .what = keeps a brain's copy of an MCP toolbox current: each tools/list_changed swaps the new snapshot in
 * .why = the runtime remove + add path the loop already reads between iterations; returns the function that stops it
 */
export const attachMcpToolBox = (brain: Pick<Bhrain, 'toolBoxes'>, box: McpToolBox, context: { log?: BrainLog } = {}): (() => void) => {
  const log = context.log ?? silentLog;
  if (!brain.toolBoxes.list().some((existing) => existing.name === box.name)) brain.toolBoxes.add(box);
  let current: McpToolBox = box;
  return box.onToolsChanged((next) => {
    brain.toolBoxes.remove(current.name);
    try {
      brain.toolBoxes.add(next);
      current = next;
    } catch (error) {
      // a new tool name that clashes with another toolbox's: keep offering the tools we had, and say why
      brain.toolBoxes.add(current);
      log.error(`MCP server '${box.server}' changed its tools, but they could not be offered: ${(error as Error)?.message ?? error}`, {
        server: box.server,
      });
    }
  });
};

import { silentLog, type BrainLog } from '../../../core/contract/BrainContext.js';
import type { Bhrain } from '../../genBhrain.js';
import type { BhrainToolBox } from '../../tool/BhrainToolBox.js';
import { pickTools, withEffect } from '../../tool/pickTools.js';
import type { McpToolBox } from './genMcpToolBox.js';

/**
 * .what = keeps a brain's copy of an MCP toolbox current: each tools/list_changed swaps the new snapshot in
 * .why = the runtime remove + add path the loop already reads between iterations; returns the function that stops it
 * .note = readOnly offers only the tools the server marks read-only (readOnlyHint: effect read), for a read-only brain
 *         (ask, --permission readOnly): the others are not even shown to the model
 */
export const attachMcpToolBox = (
  brain: Pick<Bhrain, 'toolBoxes'>,
  box: McpToolBox,
  context: { log?: BrainLog; readOnly?: boolean } = {},
): (() => void) => {
  const log = context.log ?? silentLog;
  const offered = (snapshot: McpToolBox): BhrainToolBox => (context.readOnly ? pickTools(snapshot, withEffect('read')) : snapshot);
  let current: BhrainToolBox = offered(box);
  if (!brain.toolBoxes.list().some((existing) => existing.name === box.name)) brain.toolBoxes.add(current);
  return box.onToolsChanged((next) => {
    brain.toolBoxes.remove(current.name);
    try {
      const shown = offered(next);
      brain.toolBoxes.add(shown);
      current = shown;
    } catch (error) {
      // a new tool name that clashes with another toolbox's: keep offering the tools we had, and say why
      brain.toolBoxes.add(current);
      log.error(`MCP server '${box.server}' changed its tools, but they could not be offered: ${(error as Error)?.message ?? error}`, {
        server: box.server,
      });
    }
  });
};

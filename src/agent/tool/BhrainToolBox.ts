import type { BrainToolCall, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import type { BhrainTool, BhrainToolContext, BhrainToolResult } from './defineTool.js';

export type { BhrainSpawn, BhrainSpawnRequest, BhrainSpawned, BhrainToolContext, BhrainToolResult } from './makeTool.js';

/**
 * .what = a named collection of tools: their model-facing definitions and one executor (docs/design/tools.md#toolboxes)
 * .why = the plugin unit of capability; boxes compose, and can be added or removed at runtime
 * .note = a box made of defined tools (toolBoxOf) carries them in `tools`, with their effect and paths: the session
 *         checks each call's input once against its tool, and hands `execute` the typed input. A box without `tools` (a
 *         plain box, docs/design/tools.md#toolboxes) is effect-unknown, "may change anything": its calls are checked against the
 *         definitions' JSON Schema, then run through its execute
 */
export interface BhrainToolBox {
  name: string;
  definitions: readonly BrainToolDefinition[];
  execute: (input: { call: BrainToolCall }, context: BhrainToolContext) => Promise<BhrainToolResult>;
  /** the box's tools as declared with defineTool, one per definition, in the same order */
  tools?: readonly BhrainTool[];
}

import type { BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import type { BhrainToolBox } from './BhrainToolBox.js';
import { defineTool, type BhrainTool as DefinedTool, type BhrainToolOutput } from './defineTool.js';
import { executeTool } from './executeTool.js';
import { genToolRegistry } from './genToolRegistry.js';

/** .what = a tool declared with defineTool (docs/design/tools.md#declaring-a-tool): its definition, effect, paths and typed executor */
// `any` by default, as defineTool's BhrainTool: a list holds tools of different inputs
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BhrainTool<TInput = any, TOutput extends BhrainToolOutput = BhrainToolOutput> = DefinedTool<TInput, TOutput>;

/**
 * .what = the definitions of several toolboxes merged, with tool names unique across them (docs/design/tools.md#toolboxes)
 * .why = what a session offers the model; a name offered twice is a BadRequestError naming both toolboxes
 */
const mergeBoxes = (input: { boxes: readonly BhrainToolBox[] }): BrainToolDefinition[] => genToolRegistry(input.boxes).definitions();

/**
 * .what = the BhrainTool operations (docs/design/tools.md#toolboxes): define (defineTool), execute (run one call through a
 *         box: find, check the input once, execute; no permission check) and mergeBoxes
 * .why = the names of docs/design/tools.md#toolboxes beside ours: BhrainTool.define is defineTool, BhrainTool.execute is executeTool
 */
export const BhrainTool = {
  define: defineTool,
  execute: executeTool,
  mergeBoxes,
};

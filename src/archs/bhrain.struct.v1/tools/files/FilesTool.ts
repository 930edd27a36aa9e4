import type { BrainToolDefinition } from '../../../../contract/BrainMessage.js';
import type { BhrainToolContext } from '../BhrainToolBox.js';

/**
 * .what = one tool of the files box: its model-facing definition and its executor
 * .why = the box owns call ids and error capture; each tool only turns its input into a success flag and text
 */
export interface FilesTool {
  definition: BrainToolDefinition;
  execute: (input: Record<string, unknown>, context: BhrainToolContext) => Promise<{ success: boolean; output: string }>;
}

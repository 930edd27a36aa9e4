import type { BrainToolDefinition } from '../../../core/contract/BrainMessage.js';
import type { BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { resolveHiddenPaths, type HiddenPaths } from '../../../sandbox/resolveHiddenPaths.js';
import { resolveRealPath } from '../../permission/resolveRealPath.js';

/** .what = the context a files tool runs in: the loop's tool context, and the paths hidden from it in this call */
export type FilesToolContext = BhrainToolContext & { hidden?: HiddenPaths };

/** .what = the hidden paths of a call: the toolbox's, or the defaults for a tool run on its own */
export const hiddenPathsOf = (context: FilesToolContext): HiddenPaths =>
  context.hidden ?? resolveHiddenPaths({}, { env: context.env, readable: [context.cwd, resolveRealPath(context.cwd), context.spillDir] });

/**
 * .what = one tool of the files box: its model-facing definition and its executor
 * .why = the box owns call ids and error capture; each tool only turns its input into a success flag and text
 */
export interface FilesTool {
  definition: BrainToolDefinition;
  execute: (input: Record<string, unknown>, context: FilesToolContext) => Promise<{ success: boolean; output: string }>;
}

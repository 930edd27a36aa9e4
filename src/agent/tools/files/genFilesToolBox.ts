import { resolveRealPath } from '../../permission/resolveRealPath.js';
import type { BhrainToolBox } from '../../tool/BhrainToolBox.js';
import { resolveHiddenPaths, type ReadDenial } from '../../../sandbox/resolveHiddenPaths.js';
import { editTool } from './edit.js';
import type { FilesTool } from './FilesTool.js';
import { FilesToolInputError } from './FilesToolInputError.js';
import { globTool } from './glob.js';
import { genGrepTool } from './grep.js';
import { readTool } from './read.js';
import { writeTool } from './write.js';

/** .what = how the files toolbox is built; denyRead adds paths hidden from every tool, allowRead hands paths back */
export interface FilesToolBoxOptions extends ReadDenial {
  /** grep's engine: ripgrep when on PATH (auto, the default), or forced, so tests and benchmarks can compare */
  grepEngine?: 'auto' | 'rg' | 'builtin';
}

/**
 * .what = the files toolbox: read, write, edit, glob and grep over the local file system
 * .why = the model's structured file access: bounded outputs, errors as results it can act on, no shell involved
 * .note = every tool refuses a path in a hidden one (resolveHiddenPaths: the credential stores, $BHRAIN_HOME,
 *         denyRead), and glob and grep walk past them; the workspace and the session's spill dir stay readable
 */
export const genFilesToolBox = (options: FilesToolBoxOptions = {}): BhrainToolBox => {
  const tools: FilesTool[] = [readTool, writeTool, editTool, globTool, genGrepTool({ engine: options.grepEngine ?? 'auto' })];
  const byName = new Map(tools.map((tool) => [tool.definition.name, tool]));
  const names = tools.map((tool) => tool.definition.name).join(', ');
  const denial: ReadDenial = { denyRead: options.denyRead, allowRead: options.allowRead };
  // fails here, at build time, on a relative path
  resolveHiddenPaths(denial, { env: process.env });
  return {
    name: 'files',
    definitions: Object.freeze(tools.map((tool) => tool.definition)),
    execute: async ({ call }, context) => {
      const tool = byName.get(call.name);
      if (!tool) return { callId: call.id, success: false, output: `Unknown tool "${call.name}": the files toolbox has ${names}.` };
      if (call.inputError) return { callId: call.id, success: false, output: `Invalid input for ${call.name}: ${call.inputError}` };
      try {
        const hidden = resolveHiddenPaths(denial, {
          env: context.env,
          readable: [context.cwd, resolveRealPath(context.cwd), context.spillDir],
        });
        const result = await tool.execute(call.input ?? {}, { ...context, hidden });
        return { callId: call.id, ...result };
      } catch (error) {
        // a tool failure is a result the model reads, never an exception that ends the loop
        const message = error instanceof Error ? error.message : String(error);
        if (error instanceof FilesToolInputError)
          return { callId: call.id, success: false, output: `Invalid input for ${call.name}: ${message}` };
        if (context.signal?.aborted) return { callId: call.id, success: false, output: `${call.name} was cancelled.` };
        return { callId: call.id, success: false, output: `${call.name} failed: ${message}` };
      }
    },
  };
};

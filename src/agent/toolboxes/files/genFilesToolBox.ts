import type { BhrainToolBox } from '../../tool/BhrainToolBox.js';
import type { BhrainTool } from '../../tool/defineTool.js';
import { toolBoxOf } from '../../tool/executeTool.js';
import { resolveHiddenPaths, type ReadDenial } from '../../../sandbox/resolveHiddenPaths.js';
import { genEditTool } from './edit.js';
import { genGlobTool } from './glob.js';
import { genGrepTool } from './grep.js';
import { genHiddenPathsOf } from './hiddenPaths.js';
import { genReadTool } from './read.js';
import { genWriteTool } from './write.js';

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
export const genFilesToolBox = (options: FilesToolBoxOptions = {}): BhrainToolBox & { tools: readonly BhrainTool[] } => {
  const denial: ReadDenial = { denyRead: options.denyRead, allowRead: options.allowRead };
  // fails here, at build time, on a relative path
  resolveHiddenPaths(denial, { env: process.env });
  const hidden = genHiddenPathsOf(denial);
  return toolBoxOf({
    name: 'files',
    tools: [
      genReadTool({ hidden }),
      genWriteTool({ hidden }),
      genEditTool({ hidden }),
      genGlobTool({ hidden }),
      genGrepTool({ engine: options.grepEngine ?? 'auto', hidden }),
    ],
  });
};

import type { BrainToolDefinition } from '../../../core/contract/BrainMessage.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { countLines } from './countLines.js';
import { describeFsError } from './describeFsError.js';
import { displayPath } from './displayPath.js';
import { hiddenPathsOf, type FilesTool } from './FilesTool.js';
import { formatBytes } from './formatBytes.js';
import { formatCount } from './formatCount.js';
import { openInsideWorkspace, replaceContent, type WriteTarget, type WriteToolContext } from './openInsideWorkspace.js';
import { readToolInput } from './readToolInput.js';
import { refuseHiddenPath } from './refuseHiddenPath.js';
import { resolveToolPath } from './resolveToolPath.js';

const definition: BrainToolDefinition = {
  name: 'write',
  description: loadToolDescription(new URL('./write.txt', import.meta.url)),
  inputSchema: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: 'The file to write: relative to the working directory, or absolute. Missing directories are created.',
      },
      content: { type: 'string', description: 'The complete new content of the file.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
};

/**
 * .what = the write tool: puts exactly the given content in a file, creating parent directories
 * .why = the model's way to create files; the result confirms what happened so it need not read the file back; the file
 *        is opened where it really is, and must be the file the permission check judged (see openInsideWorkspace)
 */
export const writeTool: FilesTool = {
  definition,
  execute: async (input, context) => {
    const path = readToolInput.string(input, 'path', { nonEmpty: true });
    const content = readToolInput.string(input, 'content');
    const absolutePath = resolveToolPath(path, context.cwd);
    const shown = displayPath(absolutePath, context.cwd);
    const hidden = hiddenPathsOf(context);
    const refusal = refuseHiddenPath({ path: absolutePath, shown, action: 'write', hidden });
    if (refusal) return { success: false, output: refusal };

    let target: WriteTarget;
    try {
      // the real path is resolved as the file is opened, so a link made after the permission check cannot redirect it
      const check = (context as WriteToolContext).writeCheck ?? null;
      target = await openInsideWorkspace({
        path: absolutePath,
        cwd: context.cwd,
        access: 'write',
        create: true,
        check,
        shown,
        refuseHidden: (realPath) => refuseHiddenPath({ path: realPath, shown, action: 'write', hidden }),
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException)?.code === 'EISDIR')
        return {
          success: false,
          output: `Cannot write ${shown}: it is a directory (EISDIR). Give the path of a file, e.g. ${shown}/<name>.`,
        };
      return { success: false, output: describeFsError({ error, action: 'write', path: shown }) };
    }
    if (target.refusal !== null) return { success: false, output: target.refusal };
    try {
      await replaceContent(target.handle, content);
    } catch (error) {
      return { success: false, output: describeFsError({ error, action: 'write', path: shown }) };
    } finally {
      await target.handle.close();
    }
    const bytes = Buffer.byteLength(content, 'utf8');
    const lines = countLines(content);
    const what = target.created ? `Created ${shown}` : `Overwrote ${shown} (it was ${formatBytes(target.stats.size)})`;
    return {
      success: true,
      output: `${what}: wrote ${formatCount(bytes)} byte${bytes === 1 ? '' : 's'}, ${formatCount(lines)} line${lines === 1 ? '' : 's'}.`,
    };
  },
};

import { deferInput, makeTool } from '../../tool/makeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { countLines, formatBytes, formatCount } from './formatOutput.js';
import { displayPath, resolveToolPath } from './toolPaths.js';
import { describeFsError } from './fsErrors.js';
import { openInsideWorkspace, replaceContent, type WriteTarget, type WriteToolContext } from './openInsideWorkspace.js';
import { refuseHiddenPath, type HiddenPathsOf } from './hiddenPaths.js';

/** .what = write's input: a path, and the whole new content */
export const writeInput = deferInput(
  {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: 'The file to write: relative to the working directory, or absolute. Missing directories are created.',
      },
      content: {
        type: 'string',
        description: 'The complete new content of the file.',
      },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  async () => (await import('../toolInputs.js')).writeZodInput(),
);

/**
 * .what = the write tool: puts exactly the given content in a file, creating parent directories
 * .why = the model's way to create files; the result confirms what happened so it need not read the file back; the file
 *        is opened where it really is, and must be the file the permission check judged (see openInsideWorkspace)
 */
export const genWriteTool = (options: { hidden: HiddenPathsOf }) =>
  makeTool({
    name: 'write',
    description: loadToolDescription(new URL('./write.txt', import.meta.url)),
    input: writeInput,
    effect: 'write',
    paths: (input) => [{ path: input.path, access: 'write' }],
    execute: async (input, context) => {
      const { path, content } = input;
      const absolutePath = resolveToolPath(path, context.cwd);
      const shown = displayPath(absolutePath, context.cwd);
      const hidden = options.hidden(context);
      const refusal = refuseHiddenPath({ path: absolutePath, shown, action: 'write', hidden });
      if (refusal) return { success: false, output: refusal };

      let target: WriteTarget;
      try {
        // the real path is resolved as the file is opened, so a link made after the permission check cannot redirect it
        const check = (context as WriteToolContext).writeCheck ?? null;
        target = await openInsideWorkspace({
          path: absolutePath,
          cwd: context.cwd,
          addDirs: context.addDirs,
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
  });

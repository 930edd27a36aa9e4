import { stat, writeFile } from 'node:fs/promises';

import type { BrainToolDefinition } from '../../../../contract/BrainMessage.js';
import { loadToolDescription } from '../loadToolDescription.js';
import { countLines } from './countLines.js';
import { describeFsError } from './describeFsError.js';
import { displayPath } from './displayPath.js';
import type { FilesTool } from './FilesTool.js';
import { formatBytes } from './formatBytes.js';
import { formatCount } from './formatCount.js';
import { makeParentDirs } from './makeParentDirs.js';
import { readToolInput } from './readToolInput.js';
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
 * .why = the model's way to create files; the result confirms what happened so it need not read the file back
 */
export const writeTool: FilesTool = {
  definition,
  execute: async (input, context) => {
    const path = readToolInput.string(input, 'path', { nonEmpty: true });
    const content = readToolInput.string(input, 'content');
    const absolutePath = resolveToolPath(path, context.cwd);
    const shown = displayPath(absolutePath, context.cwd);

    const before = await stat(absolutePath).catch(() => null);
    if (before?.isDirectory())
      return {
        success: false,
        output: `Cannot write ${shown}: it is a directory (EISDIR). Give the path of a file, e.g. ${shown}/<name>.`,
      };
    try {
      await makeParentDirs(absolutePath);
      await writeFile(absolutePath, content, 'utf8');
    } catch (error) {
      return { success: false, output: describeFsError({ error, action: 'write', path: shown }) };
    }
    const bytes = Buffer.byteLength(content, 'utf8');
    const lines = countLines(content);
    const what = before ? `Overwrote ${shown} (it was ${formatBytes(before.size)})` : `Created ${shown}`;
    return {
      success: true,
      output: `${what}: wrote ${formatCount(bytes)} byte${bytes === 1 ? '' : 's'}, ${formatCount(lines)} line${lines === 1 ? '' : 's'}.`,
    };
  },
};

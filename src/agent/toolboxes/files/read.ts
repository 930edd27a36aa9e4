import { readdir, stat } from 'node:fs/promises';

import { deferInput, makeTool } from '../../tool/makeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import {
  BINARY_SNIFF_BYTES,
  DIRECTORY_LISTING_MAX,
  READ_CHUNK_BYTES,
  READ_DEFAULT_LIMIT_LINES,
  READ_MAX_LINE_CHARS,
  READ_MAX_SCAN_BYTES,
  READ_MAX_SKIP_BYTES,
} from './constants.js';
import { describeFsError, describeMissingPath } from './fsErrors.js';
import { isBinary } from './binaryContent.js';
import { formatBytes, formatCount, formatNumberedLine } from './formatOutput.js';
import { displayPath, resolveToolPath } from './toolPaths.js';
import { readLineWindow } from './readLineWindow.js';
import { describeFileKind, readBoundedFile } from './readBoundedFile.js';
import { refuseHiddenPath, type HiddenPathsOf } from './hiddenPaths.js';

/** .what = read's input: a path, and the window of lines to show */
export const readInput = deferInput(
  {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: 'The file to read: relative to the working directory, or absolute.',
      },
      offset: {
        description: 'The 1-based line number to start from (default 1). Use it to continue a long file.',
        type: 'integer',
        minimum: 1,
      },
      limit: {
        description: `How many lines to show (default ${READ_DEFAULT_LIMIT_LINES}).`,
        type: 'integer',
        minimum: 1,
      },
    },
    required: ['path'],
    additionalProperties: false,
  },
  async () => (await import('../toolInputs.js')).readZodInput(READ_DEFAULT_LIMIT_LINES),
);

/** .what = the answer to reading a directory: what it holds, and the tools that fit */
const describeDirectory = async (absolutePath: string, shown: string): Promise<string> => {
  const entries = (await readdir(absolutePath, { withFileTypes: true }))
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort();
  const listed = entries.slice(0, DIRECTORY_LISTING_MAX);
  const more = entries.length > listed.length ? ` (showing the first ${listed.length})` : '';
  const listing = entries.length === 0 ? 'It is empty.' : `It has ${formatCount(entries.length)} entries${more}:\n${listed.join('\n')}`;
  return `${shown} is a directory, not a file. ${listing}\nTo list its files recursively use glob { pattern: "**/*", path: "${shown}" }; to search their contents use grep.`;
};

/** .what = why a path that is not a regular file is not read: what it is, and what to do instead */
const describeNotRegular = (shown: string, what: string): string =>
  `${shown} is ${what}, not a regular file, so it is not read: reading one can block for ever or never end. Read a regular file, or use bash with a bound (e.g. \`head -c 4096 ${shown}\`, \`timeout 5 cat ${shown}\`).`;

/**
 * .what = the read tool: a text file's lines, numbered, paged by offset and limit, streamed so any size is safe
 * .why = the model's main way to look at code; every failure (missing, directory, binary) says what to do instead
 */
export const genReadTool = (options: { hidden: HiddenPathsOf }) =>
  makeTool({
    name: 'read',
    description: loadToolDescription(new URL('./read.txt', import.meta.url)),
    input: readInput,
    effect: 'read',
    paths: (input) => [{ path: input.path, access: 'read' }],
    execute: async (input, context) => {
      const path = input.path;
      const offsetLine = input.offset ?? 1;
      const limitLines = input.limit ?? READ_DEFAULT_LIMIT_LINES;
      const absolutePath = resolveToolPath(path, context.cwd);
      const shown = displayPath(absolutePath, context.cwd);
      const hidden = options.hidden(context);
      const refusal = refuseHiddenPath({ path: absolutePath, shown, action: 'read', hidden });
      if (refusal) return { success: false, output: refusal };

      const stats = await stat(absolutePath).catch((error: unknown) => error as NodeJS.ErrnoException);
      if (stats instanceof Error) {
        if (stats.code === 'ENOENT' || stats.code === 'ENOTDIR')
          return { success: false, output: await describeMissingPath({ path: absolutePath, cwd: context.cwd, kind: 'file' }) };
        return { success: false, output: describeFsError({ error: stats, action: 'read', path: shown }) };
      }
      if (stats.isDirectory()) return { success: false, output: await describeDirectory(absolutePath, shown) };
      if (!stats.isFile()) return { success: false, output: describeNotRegular(shown, describeFileKind(stats)) };
      // a hard link to a hidden file is the same file under another name
      const inode = `${stats.dev}:${stats.ino}`;
      const linked = hidden.entries.find((entry) => entry.inode === inode && !entry.isDirectory);
      if (linked)
        return {
          success: false,
          output:
            refuseHiddenPath({ path: linked.realPath ?? linked.path, shown, action: 'read', hidden }) ??
            `Refused to read ${shown}: it is a hidden file.`,
        };
      // the first bytes as read: a /proc or /sys file says 0 bytes and may hold any amount
      const head = await readBoundedFile({ path: absolutePath, maxBytes: BINARY_SNIFF_BYTES, signal: context.signal }).catch(
        (error: unknown) => (context.signal?.aborted ? Promise.reject(error) : ({ kind: 'failed', error } as const)),
      );
      if (head.kind === 'failed') return { success: false, output: describeFsError({ error: head.error, action: 'read', path: shown }) };
      if (head.kind === 'not-regular') return { success: false, output: describeNotRegular(shown, head.what) };
      const size = stats.size > 0 ? formatBytes(stats.size) : 'of unreported size (a pseudo-file, as in /proc and /sys)';
      if (head.kind === 'read' && head.bytes.length === 0) return { success: true, output: `${shown} is empty (0 bytes).` };
      if (head.kind === 'binary' || isBinary(head.bytes))
        return {
          success: false,
          output: `${shown} is a binary file (${size}; it has NUL bytes in its first 8 KB), so it is not shown. Inspect it with bash if you must (e.g. \`file\`, \`xxd ${shown} | head\`).`,
        };

      const window = await readLineWindow({
        path: absolutePath,
        offsetLine,
        limitLines,
        maxLineChars: READ_MAX_LINE_CHARS,
        chunkBytes: READ_CHUNK_BYTES,
        maxScanBytes: READ_MAX_SCAN_BYTES,
        maxSkipBytes: READ_MAX_SKIP_BYTES,
        signal: context.signal,
      });
      if (window.skipBudgetHit)
        return {
          success: false,
          output: `offset ${offsetLine} was not reached: the first ${formatBytes(READ_MAX_SKIP_BYTES)} of ${shown} (${stats.size > 0 ? `${size} in all` : size}) hold only ${formatCount(window.countedLines)} lines, and read stops skipping there to stay fast. Use bash to jump that far (e.g. \`tail -n +${offsetLine} ${shown} | head -n ${limitLines}\`), or read a smaller offset.`,
        };
      if (window.lines.length === 0)
        return {
          success: false,
          output: `offset ${offsetLine} is past the end of ${shown}, which has ${formatCount(window.countedLines)} line${window.countedLines === 1 ? '' : 's'}. Use an offset between 1 and ${formatCount(Math.max(1, window.countedLines))}.`,
        };

      const body = window.lines.map((line, index) => {
        const cut = line.chars > line.text.length;
        const marker = cut ? `… [line cut: ${formatCount(line.chars)}${line.charsAtLeast ? '+' : ''} chars]` : '';
        return formatNumberedLine(offsetLine + index, line.text + marker);
      });
      const notes: string[] = [];
      if (window.invalidUtf8)
        notes.push(
          '[Note: this file is not valid UTF-8; bytes that could not be decoded are shown as �. Edits that touch them may change those bytes.]',
        );
      if (window.crlf) notes.push('[Note: this file has CRLF (\\r\\n) line endings; the \\r is not shown.]');

      const lastShown = offsetLine + window.lines.length - 1;
      const next = `continue with read { path: "${shown}", offset: ${lastShown + 1} }`;
      if (window.totalLines !== null && window.totalLines > lastShown)
        notes.push(
          `[Showing lines ${offsetLine}–${lastShown} of ${formatCount(window.totalLines)}; ${formatCount(window.totalLines - lastShown)} more: ${next}.]`,
        );
      const stoppedInLine = window.lines[window.lines.length - 1].charsAtLeast;
      if (stoppedInLine)
        notes.push(
          `[Reading stopped inside line ${lastShown}, which is longer than the ${formatBytes(READ_MAX_SCAN_BYTES)} scanned (the file is ${size}). If lines follow it, ${next}; to see more of this line use bash (e.g. \`cut -c1-20000\`).]`,
        );
      else if (window.totalLines === null)
        notes.push(
          `[Showing lines ${offsetLine}–${lastShown}. The file is ${size} and has more: at least ${formatCount(window.countedLines)} lines (counting stopped after ${formatBytes(READ_MAX_SCAN_BYTES)}); ${next}.]`,
        );
      return { success: true, output: [body.join('\n'), ...notes].join('\n\n') };
    },
  });

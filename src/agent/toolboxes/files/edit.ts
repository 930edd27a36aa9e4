import { isUtf8 } from 'node:buffer';
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

import { deferInput, makeTool } from '../../tool/makeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { EDIT_CONTEXT_LINES, EDIT_MAX_FILE_BYTES, EDIT_MAX_SNIPPET_LINES, READ_MAX_LINE_CHARS } from './constants.js';
import { isBinary } from './binaryContent.js';
import { countLines, formatBytes, formatCount, formatNumberedLine } from './formatOutput.js';
import { displayPath, resolveToolPath } from './toolPaths.js';
import { describeFsError, describeMissingPath } from './fsErrors.js';
import { openInsideWorkspace, replaceContent, type WriteToolContext, type WriteTarget } from './openInsideWorkspace.js';
import { refuseHiddenPath, type HiddenPathsOf } from './hiddenPaths.js';

/** .what = edit's input: a path, the exact text to replace and its replacement, once or everywhere */
export const editInput = deferInput(
  {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: 'The file to edit: relative to the working directory, or absolute.',
      },
      old_string: {
        type: 'string',
        description: 'The exact text to replace, whitespace included. Empty only to create a file that does not exist.',
      },
      new_string: {
        type: 'string',
        description: 'The text to put in its place (must differ from old_string).',
      },
      replace_all: {
        description: 'Replace every occurrence of old_string (default false: old_string must occur exactly once).',
        type: 'boolean',
      },
    },
    required: ['path', 'old_string', 'new_string'],
    additionalProperties: false,
  },
  async () => (await import('../toolInputs.js')).editZodInput(),
);

/** .what = the start offsets of non-overlapping occurrences of needle in text */
const findAll = (text: string, needle: string): number[] => {
  const offsets: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) offsets.push(index);
  return offsets;
};

/** .what = a function from a character offset to its 1-based line number, for one text */
const genLineLocator = (text: string): ((offset: number) => number) => {
  const breaks: number[] = [];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) breaks.push(index);
  return (offset) => {
    // the number of line breaks before offset, by binary search
    let low = 0;
    let high = breaks.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (breaks[middle] < offset) low = middle + 1;
      else high = middle;
    }
    return low + 1;
  };
};

/** .what = the text's lines firstLine…lastLine, numbered like read, each cut like read cuts */
const numberLines = (lines: string[], firstLine: number, lastLine: number): string[] => {
  const shown: string[] = [];
  for (let line = firstLine; line <= lastLine; line++) {
    const text = lines[line - 1].replace(/\r$/, '');
    const cut = text.length > READ_MAX_LINE_CHARS ? `… [line cut: ${formatCount(text.length)} chars]` : '';
    shown.push(formatNumberedLine(line, cut ? text.slice(0, READ_MAX_LINE_CHARS) + cut : text));
  }
  return shown;
};

/**
 * .what = why old_string was not found, with the place it matches when whitespace is ignored
 * .why = most failed edits differ only in indentation or line breaks; showing the real lines fixes them in one retry
 */
const explainNotFound = (text: string, oldString: string, shown: string): string => {
  const head = `old_string was not found in ${shown}.`;
  const visible = [...oldString].filter((char) => !/\s/.test(char));
  if (visible.length > 0 && oldString.length <= 20_000) {
    const pattern = new RegExp(visible.map((char) => char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('\\s*'), 'g');
    const matches = [...text.matchAll(pattern)].slice(0, 10);
    if (matches.length > 0) {
      const locate = genLineLocator(text);
      const first = matches[0];
      const firstLine = locate(first.index);
      const lastLine = Math.min(locate(first.index + first[0].length - 1), firstLine + 19);
      const where = matches.map((match) => locate(match.index)).join(', ');
      return [
        `${head} It does match when whitespace is ignored, at line ${where}: the whitespace or indentation differs (tabs vs spaces, trailing spaces, or line breaks).`,
        `The file's actual text at line ${firstLine}:`,
        numberLines(text.split('\n'), firstLine, lastLine).join('\n'),
        'Copy old_string exactly from these lines (without the line-number prefix) and retry.',
      ].join('\n');
    }
  }
  const numbered = /^\s*\d+\t/m.test(oldString)
    ? " old_string seems to include read's line-number prefixes (spaces, number, tab): leave them out."
    : '';
  return `${head} It must match the file exactly, including whitespace and line breaks.${numbered} Read the relevant lines again and copy the text exactly.`;
};

/**
 * .what = the lines around each change in the new text, 3 lines of context, merged and capped
 * .why = the model sees the result of its edit without another read
 */
const showChanges = (text: string, changes: { start: number; end: number }[]): string => {
  if (text === '') return '(the file is now empty)';
  const lines = text.split('\n');
  const lineCount = text.endsWith('\n') ? lines.length - 1 : lines.length;
  const locate = genLineLocator(text);
  const regions: { first: number; last: number }[] = [];
  for (const change of changes) {
    const first = Math.max(1, Math.min(locate(change.start), lineCount) - EDIT_CONTEXT_LINES);
    const changedLast = change.end > change.start ? locate(change.end - 1) : locate(change.start);
    const last = Math.min(lineCount, changedLast + EDIT_CONTEXT_LINES);
    const previous = regions[regions.length - 1];
    if (previous && first <= previous.last + 1) previous.last = Math.max(previous.last, last);
    else regions.push({ first, last });
  }
  const shown: string[] = [];
  let budget = EDIT_MAX_SNIPPET_LINES;
  let hiddenLines = 0;
  for (const region of regions) {
    const size = region.last - region.first + 1;
    if (budget <= 0) {
      hiddenLines += size;
      continue;
    }
    if (shown.length > 0) shown.push('   ...');
    const last = Math.min(region.last, region.first + budget - 1);
    shown.push(...numberLines(lines, region.first, last));
    hiddenLines += region.last - last;
    budget -= last - region.first + 1;
  }
  if (hiddenLines > 0) shown.push(`[… ${formatCount(hiddenLines)} more changed or context lines not shown; read the file to see them]`);
  return shown.join('\n');
};

/** .what = the edit itself, on the file openInsideWorkspace opened: read, match, replace, write back, confirm */
const editOpened = async (input: {
  handle: FileHandle;
  stats: Stats;
  created: boolean;
  oldString: string;
  newString: string;
  replaceAll: boolean;
  shown: string;
}): Promise<{ success: boolean; output: string }> => {
  const { handle, stats, oldString, newString, replaceAll, shown } = input;
  // an empty old_string on a missing file created it
  if (input.created) {
    try {
      await replaceContent(handle, newString);
    } catch (error) {
      return { success: false, output: describeFsError({ error, action: 'create', path: shown }) };
    }
    const lines = countLines(newString);
    return {
      success: true,
      output: `Created ${shown} with new_string (${formatCount(Buffer.byteLength(newString))} bytes, ${formatCount(lines)} line${lines === 1 ? '' : 's'}).`,
    };
  }
  if (stats.size > EDIT_MAX_FILE_BYTES)
    return {
      success: false,
      output: `Cannot edit ${shown}: it is ${formatBytes(stats.size)}, more than edit handles (${formatBytes(EDIT_MAX_FILE_BYTES)}). Use bash (e.g. sed) for files this large.`,
    };

  const bytes = await handle.readFile();
  if (isBinary(bytes))
    return {
      success: false,
      output: `Cannot edit ${shown}: it is a binary file (NUL bytes in its first 8 KB). Use bash for binary files.`,
    };
  if (!isUtf8(bytes))
    return {
      success: false,
      output: `Cannot edit ${shown}: it is not valid UTF-8, and rewriting it as text would corrupt the bytes that are not. Use bash (e.g. sed) for this file.`,
    };
  const text = bytes.toString('utf8');
  if (oldString === '') {
    if (text !== '')
      return {
        success: false,
        output: `old_string is empty, but ${shown} already exists and is not empty. Give the exact text to replace, or use write to replace the whole file.`,
      };
  }

  // an exact match first; a CRLF file is also matched with its own line endings
  let needle = oldString;
  let replacement = newString;
  let offsets = oldString === '' ? [0] : findAll(text, needle);
  let note = '';
  if (offsets.length === 0 && text.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r')) {
    needle = oldString.replace(/\n/g, '\r\n');
    replacement = newString.replace(/\r?\n/g, '\r\n');
    offsets = findAll(text, needle);
    if (offsets.length > 0) note = " (matched using the file's CRLF line endings)";
  }
  if (offsets.length === 0) return { success: false, output: explainNotFound(text, oldString, shown) };
  if (offsets.length > 1 && !replaceAll) {
    const locate = genLineLocator(text);
    const where = offsets.slice(0, 20).map(locate).join(', ');
    const more = offsets.length > 20 ? ', …' : '';
    return {
      success: false,
      output: `old_string occurs ${formatCount(offsets.length)} times in ${shown} (at lines ${where}${more}), so it is ambiguous. Include more surrounding lines in old_string to make it unique, or set replace_all: true to replace every occurrence.`,
    };
  }

  // build the new text by slices, never String.replace: new_string's "$&" must stay literal
  const parts: string[] = [];
  const changes: { start: number; end: number }[] = [];
  let from = 0;
  let length = 0;
  for (const offset of offsets) {
    const kept = text.slice(from, offset);
    parts.push(kept, replacement);
    length += kept.length;
    changes.push({ start: length, end: length + replacement.length });
    length += replacement.length;
    from = offset + needle.length;
  }
  parts.push(text.slice(from));
  const updated = parts.join('');
  try {
    await replaceContent(handle, updated);
  } catch (error) {
    return { success: false, output: describeFsError({ error, action: 'write', path: shown }) };
  }
  const count = offsets.length;
  return {
    success: true,
    output: `Edited ${shown}: ${formatCount(count)} replacement${count === 1 ? '' : 's'}${note}. Updated lines:\n${showChanges(updated, changes)}`,
  };
};

/**
 * .what = the edit tool: replaces an exact string in a file (once, or everywhere with replace_all)
 * .why = exact, unique matches make edits safe to apply blind; each refusal says how to fix the call
 */
export const genEditTool = (options: { hidden: HiddenPathsOf }) =>
  makeTool({
    name: 'edit',
    description: loadToolDescription(new URL('./edit.txt', import.meta.url)),
    input: editInput,
    effect: 'write',
    paths: (input) => [{ path: input.path, access: 'write' }],
    execute: async (input, context) => {
      const { path, old_string: oldString, new_string: newString } = input;
      const replaceAll = input.replace_all ?? false;
      const absolutePath = resolveToolPath(path, context.cwd);
      const shown = displayPath(absolutePath, context.cwd);
      const hidden = options.hidden(context);
      const refusal = refuseHiddenPath({ path: absolutePath, shown, action: 'edit', hidden });
      if (refusal) return { success: false, output: refusal };
      if (oldString === newString)
        return {
          success: false,
          output: 'old_string and new_string are identical, so nothing would change. Give the new text in new_string.',
        };

      let target: WriteTarget;
      try {
        // opened once, where it really is, for both the read and the write: nothing can swap the file in between
        const check = (context as WriteToolContext).writeCheck ?? null;
        target = await openInsideWorkspace({
          path: absolutePath,
          cwd: context.cwd,
          addDirs: context.addDirs,
          access: 'edit',
          create: oldString === '',
          check,
          shown,
          refuseHidden: (realPath) => refuseHiddenPath({ path: realPath, shown, action: 'edit', hidden }),
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException)?.code;
        if (code === 'EISDIR')
          return { success: false, output: `Cannot edit ${shown}: it is a directory. Give the path of a file inside it.` };
        if (code === 'ENOENT' && oldString !== '') {
          const missing = await describeMissingPath({ path: absolutePath, cwd: context.cwd, kind: 'file' });
          return { success: false, output: `${missing} To create a new file, use write (or edit with an empty old_string).` };
        }
        return { success: false, output: describeFsError({ error, action: oldString === '' ? 'create' : 'edit', path: shown }) };
      }
      if (target.refusal !== null) return { success: false, output: target.refusal };
      const { handle, stats } = target;
      try {
        return await editOpened({ handle, stats, created: target.created, oldString, newString, replaceAll, shown });
      } finally {
        await handle.close();
      }
    },
  });

import { TextDecoder } from 'node:util';

import { openRegularFile, readChunk } from './readBoundedFile.js';

/** .what = one line of the window: its text (at most maxLineChars) and its full length */
export interface WindowLine {
  text: string;
  /** the line's full length in characters (without the line break) */
  chars: number;
  /** true when reading stopped inside this line, so chars is a lower bound */
  charsAtLeast: boolean;
}

/**
 * .what = lines offsetLine… of a file, streamed chunk by chunk, with the file's line count when it is cheap to know
 * .why = a 1 GB file (or a 1 GB line) must return its first lines fast and with bounded memory:
 *        skipping to the window only scans for newlines, each window line keeps at most maxLineChars,
 *        and past the window the scan stops after maxScanBytes; every bound counts bytes read, never the stat size (0
 *        for a /proc file), and only a regular file is opened (openRegularFile)
 */
export const readLineWindow = async (input: {
  path: string;
  /** 1-based number of the first line to return */
  offsetLine: number;
  limitLines: number;
  maxLineChars: number;
  chunkBytes: number;
  /** from the window's start, read at most this many bytes; the line count is then a lower bound */
  maxScanBytes: number;
  /** before the window, skip at most this many bytes looking for offsetLine; past it, no lines are returned */
  maxSkipBytes?: number;
  signal?: AbortSignal;
}): Promise<{
  lines: WindowLine[];
  /** the file's line count, or null when the scan stopped before the end */
  totalLines: number | null;
  /** the lines counted before the scan stopped (equals totalLines when it reached the end) */
  countedLines: number;
  /** some shown line had bytes that are not valid UTF-8 (shown as U+FFFD) */
  invalidUtf8: boolean;
  /** some shown line ended in CRLF (the CR is not shown) */
  crlf: boolean;
  /** the skip to offsetLine stopped after maxSkipBytes: offsetLine may exist further on */
  skipBudgetHit: boolean;
}> => {
  const { offsetLine, maxLineChars } = input;
  const windowEnd = offsetLine + input.limitLines;
  const opened = await openRegularFile(input.path);
  // the caller checked the path's kind: this is a file swapped since
  if ('notRegular' in opened)
    throw Object.assign(new Error(`${input.path} is ${opened.notRegular}, not a regular file`), { code: 'EINVAL' });
  const { handle } = opened;
  try {
    const buffer = Buffer.allocUnsafe(input.chunkBytes);
    const lines: WindowLine[] = [];
    // decoders stream across chunk boundaries; a line break never falls inside a UTF-8 sequence
    const decoder = new TextDecoder('utf-8');
    let validator: TextDecoder | null = new TextDecoder('utf-8', { fatal: true });
    let invalidUtf8 = false;
    let crlf = false;
    let line = 1;
    let lineHasBytes = false;
    let position = 0;
    let scannedBytes = 0;
    let skippedBytes = 0;
    let budgetHit = false;
    let skipBudgetHit = false;
    let current = { text: '', chars: 0, last: '' };

    const validate = (bytes?: Uint8Array) => {
      if (!validator) return;
      try {
        if (bytes) validator.decode(bytes, { stream: true });
        else validator.decode();
      } catch {
        invalidUtf8 = true;
        validator = null;
      }
    };
    const append = (text: string) => {
      if (text === '') return;
      current.chars += text.length;
      // keep one spare character so a trailing CR can be dropped without losing a visible one
      if (current.text.length <= maxLineChars) current.text += text.slice(0, maxLineChars + 1 - current.text.length);
      current.last = text[text.length - 1];
    };
    const finishLine = (charsAtLeast: boolean) => {
      append(decoder.decode());
      // a line cut by the scan budget may end inside a UTF-8 sequence: that is not invalid UTF-8
      if (!charsAtLeast) validate();
      let { text, chars } = current;
      if (current.last === '\r' && !charsAtLeast) {
        crlf = true;
        chars -= 1;
        if (text.length > chars) text = text.slice(0, chars);
      }
      if (text.length > maxLineChars) {
        text = text.slice(0, maxLineChars);
        // never end on half a surrogate pair
        if (/[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1);
      }
      lines.push({ text, chars, charsAtLeast });
      current = { text: '', chars: 0, last: '' };
    };

    reading: for (;;) {
      if (input.signal?.aborted) throw input.signal.reason;
      const bytesRead = await readChunk(handle, buffer, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      while (start < bytesRead) {
        const newline = chunk.indexOf(10, start);
        const end = newline === -1 ? bytesRead : newline;
        if (line < offsetLine) {
          // before the window: only find the line breaks
          lineHasBytes = newline === -1;
          skippedBytes += (newline === -1 ? bytesRead : newline + 1) - start;
        } else {
          if (line < windowEnd && end > start) {
            const bytes = chunk.subarray(start, end);
            append(decoder.decode(bytes, { stream: true }));
            validate(bytes);
          }
          scannedBytes += (newline === -1 ? bytesRead : newline + 1) - start;
          if (end > start) lineHasBytes = true;
          if (newline !== -1 && line < windowEnd) finishLine(false);
        }
        if (newline === -1) break;
        line += 1;
        lineHasBytes = false;
        start = newline + 1;
        if (scannedBytes > input.maxScanBytes) {
          budgetHit = true;
          break reading;
        }
      }
      // a far offset in a huge (or sparse) file would otherwise scan it all: time grows with the file, ~3 s per GB
      if (input.maxSkipBytes !== undefined && line < offsetLine && skippedBytes > input.maxSkipBytes) {
        skipBudgetHit = true;
        break;
      }
      if (scannedBytes > input.maxScanBytes) {
        budgetHit = true;
        break;
      }
    }

    // the last line may have no line break; if reading stopped inside a window line, show what was read
    if (lineHasBytes && line >= offsetLine && line < windowEnd) finishLine(budgetHit);
    const countedLines = line - 1 + (lineHasBytes ? 1 : 0);
    return { lines, totalLines: budgetHit || skipBudgetHit ? null : countedLines, countedLines, invalidUtf8, crlf, skipBudgetHit };
  } finally {
    await handle.close();
  }
};

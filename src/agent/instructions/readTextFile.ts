import { stat } from 'node:fs/promises';

import { openRegularFile } from '../toolboxes/files/readBoundedFile.js';

/** .what = a size as a person reads it: 64 KiB, 10.0 MiB */
const formatBytes = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : bytes >= 1024 ? `${Math.round(bytes / 1024)} KiB` : `${bytes} bytes`;

/**
 * .what = a file's text, when it is a regular UTF-8 text file of at most maxBytes; else why it is not
 * .why = a huge file is refused by its size alone, before a byte of it is read
 */
export const readTextFile = async (
  path: string,
  maxBytes: number,
): Promise<{ ok: true; text: string } | { ok: false; problem: string }> => {
  const stats = await stat(path).catch((error: NodeJS.ErrnoException) => error);
  if (stats instanceof Error) return { ok: false, problem: `could not be read (${stats.code ?? stats.message})` };
  if (!stats.isFile()) return { ok: false, problem: 'is not a regular file' };
  if (stats.size > maxBytes)
    return { ok: false, problem: `is ${formatBytes(stats.size)}, more than the ${formatBytes(maxBytes)} an instruction file may be` };
  let bytes: Buffer;
  try {
    // a file swapped for a FIFO since the stat is not waited on
    const opened = await openRegularFile(path);
    if ('notRegular' in opened) return { ok: false, problem: 'is not a regular file' };
    const { handle } = opened;
    try {
      bytes = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
      bytes = bytes.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { ok: false, problem: `could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  // it grew since the stat
  if (bytes.length > maxBytes) return { ok: false, problem: `is more than the ${formatBytes(maxBytes)} an instruction file may be` };
  if (bytes.includes(0)) return { ok: false, problem: 'is binary, not text' };
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, problem: 'is not UTF-8 text' };
  }
};

import { constants, type Stats } from 'node:fs';
import { lstat, open, stat, type FileHandle } from 'node:fs/promises';

import { isBinary } from './binaryContent.js';
import { BINARY_SNIFF_BYTES, READ_CHUNK_BYTES } from './constants.js';

const { O_RDONLY, O_NONBLOCK, O_NOCTTY, O_NOFOLLOW } = constants;

/** .what = what a file that is not a regular file is, in the words the model reads */
export const describeFileKind = (stats: Stats): string =>
  stats.isDirectory()
    ? 'a directory'
    : stats.isFIFO()
      ? 'a FIFO (named pipe)'
      : stats.isCharacterDevice()
        ? 'a character device'
        : stats.isBlockDevice()
          ? 'a block device'
          : stats.isSocket()
            ? 'a socket'
            : stats.isSymbolicLink()
              ? 'a symbolic link'
              : 'a special file';

/**
 * .what = a regular file opened for reading, or what it is instead: its stat first (a FIFO, socket or device is never
 *         opened: opening one can block for ever, or act), then an open that cannot block nor take a terminal, whose own
 *         stat must say regular too (the path may have been swapped between)
 * .why = every read in bhrain's own process goes through here, so no path the model names or plants (`.gitignore` as a
 *        FIFO, a link to /dev/zero) can hang a call or feed it without end
 */
export const openRegularFile = async (
  path: string,
  options: { followLinks?: boolean } = {},
): Promise<{ handle: FileHandle; stats: Stats } | { notRegular: string }> => {
  const followLinks = options.followLinks ?? true;
  const before = await (followLinks ? stat(path) : lstat(path));
  if (!before.isFile()) return { notRegular: describeFileKind(before) };
  const handle = await open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | (followLinks ? 0 : O_NOFOLLOW));
  try {
    const stats = await handle.stat();
    if (stats.isFile()) return { handle, stats };
    await handle.close();
    return { notRegular: describeFileKind(stats) };
  } catch (error) {
    await handle.close();
    throw error;
  }
};

/** .what = one read from an open file, where a pseudo-file that would block (EAGAIN: nothing to read now) is its end */
export const readChunk = async (handle: FileHandle, buffer: Buffer, position: number | null): Promise<number> => {
  try {
    return (await handle.read(buffer, 0, buffer.length, position)).bytesRead;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EAGAIN') return 0;
    throw error;
  }
};

/** .what = how a bounded read ended: the bytes (at most maxBytes, `more` when there were more), a binary file, or not a file */
export type BoundedRead =
  { kind: 'read'; bytes: Buffer; more: boolean; stats: Stats } | { kind: 'binary'; stats: Stats } | { kind: 'not-regular'; what: string };

/**
 * .what = at most maxBytes of a regular file, counted as they are read, never from its stat size (a /proc or /sys file
 *         says 0 and may hold gigabytes: /proc/self/pagemap), read chunk by chunk with the abort signal checked between
 *         chunks; with sniffBinary, a NUL among the first 8 KB ends it as binary
 * .why = grep, the ignore files of grep and glob, and the audit read whole files in bhrain's process: each stops at its
 *        bound, and at its deadline, whatever kind of file it meets
 */
export const readBoundedFile = async (input: {
  path: string;
  maxBytes: number;
  signal?: AbortSignal;
  followLinks?: boolean;
  sniffBinary?: boolean;
}): Promise<BoundedRead> => {
  const opened = await openRegularFile(input.path, { followLinks: input.followLinks });
  if ('notRegular' in opened) return { kind: 'not-regular', what: opened.notRegular };
  const { handle, stats } = opened;
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    let sniffed = !input.sniffBinary;
    // one byte past the bound says whether there is more; whole chunks, since some pseudo-files refuse a read of an
    // odd size (/proc/self/pagemap reads in 8-byte entries)
    while (total <= input.maxBytes) {
      if (input.signal?.aborted) throw input.signal.reason;
      const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      const bytesRead = await readChunk(handle, chunk, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (!sniffed && total >= BINARY_SNIFF_BYTES) {
        sniffed = true;
        if (isBinary(Buffer.concat(chunks))) return { kind: 'binary', stats };
      }
    }
    const bytes = Buffer.concat(chunks);
    if (!sniffed && isBinary(bytes)) return { kind: 'binary', stats };
    return { kind: 'read', bytes: bytes.subarray(0, input.maxBytes), more: total > input.maxBytes, stats };
  } finally {
    await handle.close();
  }
};

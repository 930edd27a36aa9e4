import { open } from 'node:fs/promises';

import { BINARY_SNIFF_BYTES } from './constants.js';

/**
 * .what = whether bytes look binary: a NUL byte among the first 8 KB
 * .why = the heuristic git and ripgrep use; text files practically never contain NUL, binaries nearly always do early
 */
export const isBinary = (bytes: Uint8Array): boolean => bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);

/**
 * .what = the first maxBytes of a file (fewer if the file is shorter)
 * .why = enough to sniff for binary content without reading a file that may be gigabytes
 */
export const readHeadBytes = async (path: string, maxBytes: number): Promise<Buffer> => {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
};

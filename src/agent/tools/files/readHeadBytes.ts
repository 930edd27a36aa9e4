import { open } from 'node:fs/promises';

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

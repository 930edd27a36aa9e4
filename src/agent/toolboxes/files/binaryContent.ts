import { BINARY_SNIFF_BYTES } from './constants.js';

/**
 * .what = whether bytes look binary: a NUL byte among the first 8 KB
 * .why = the heuristic git and ripgrep use; text files practically never contain NUL, binaries nearly always do early
 */
export const isBinary = (bytes: Uint8Array): boolean => bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);

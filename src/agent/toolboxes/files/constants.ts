/**
 * .what = defaults that change the files tools' behaviour, in one place
 * .why = every cap the model can run into is named here, with its unit, so it can be tuned and explained
 */

/** read shows this many lines when the model gives no limit */
export const READ_DEFAULT_LIMIT_LINES = 2_000;

/** read cuts a line longer than this, so one minified line cannot flood the context */
export const READ_MAX_LINE_CHARS = 2_000;

/** read streams the file in chunks of this size, so a huge file never sits in memory */
export const READ_CHUNK_BYTES = 64 * 1024;

/** past the window, read counts lines only this far; beyond it the total is reported as "at least" */
export const READ_MAX_SCAN_BYTES = 32 * 1024 * 1024;

/** before the window, read skips at most this many bytes to find the offset line, so a far offset stays fast (~1 s) */
export const READ_MAX_SKIP_BYTES = 512 * 1024 * 1024;

/** a NUL byte in this many leading bytes marks a file as binary (the heuristic git and ripgrep use) */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** a missing path's error names at most this many similarly named siblings */
export const SIMILAR_NAMES_MAX = 5;

/** read of a directory lists at most this many entries */
export const DIRECTORY_LISTING_MAX = 50;

/** edit loads the whole file; beyond this size it refuses and points to bash */
export const EDIT_MAX_FILE_BYTES = 50 * 1024 * 1024;

/** edit shows this many unchanged lines around each change */
export const EDIT_CONTEXT_LINES = 3;

/** edit's confirmation shows at most this many lines, so replace_all over a big file stays readable */
export const EDIT_MAX_SNIPPET_LINES = 200;

/** glob lists at most this many paths */
export const GLOB_MAX_RESULTS = 1_000;

/** grep lists at most this many matching lines */
export const GREP_MAX_MATCHES = 1_000;

/** grep cuts a matching line longer than this */
export const GREP_MAX_LINE_CHARS = 500;

/** an ignore file (.gitignore, info/exclude, the global one) is read this far, in whole lines */
export const IGNORE_FILE_MAX_BYTES = 1024 * 1024;

/** grep skips files larger than this, counted as read (ripgrep: --max-filesize 10M, by the stat size) */
export const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** grep stops after this long and says its results are partial */
export const GREP_TIMEOUT_MS = 60_000;

/** the built-in grep reads this many files at once */
export const GREP_FILE_CONCURRENCY = 16;

/** ripgrep's data segment (heap) is capped at this: ~20 MB is what it uses on a 17,000-file tree, and a planted ignore
 *  file without end (a link to /dev/zero) would otherwise grow it by GBs a second */
export const GREP_RG_MAX_DATA_BYTES = 1024 * 1024 * 1024;

/** ripgrep's stdout is never buffered beyond this, whatever it prints */
export const GREP_RG_MAX_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * .what = the hashes of episodes that a series compacted in this process
 * .why = a compacted episode is closed: continuing it via on.episode must fail, whichever repl instance is asked;
 *        hashes only (64 bytes each), so this stays small however long the process runs
 */
const compacted = new Set<string>();

/** .what = records that a series compacted this episode into a recap */
export const markEpisodeCompacted = (hash: string): void => void compacted.add(hash);

/** .what = whether a series compacted this episode (in this process, or as recorded by a ref store) */
export const isEpisodeCompacted = (hash: string): boolean => compacted.has(hash);

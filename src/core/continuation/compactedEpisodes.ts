import type { BrainEpisode } from '../contract/BrainEpisode.js';
import type { BrainSeries } from '../contract/BrainSeries.js';

/**
 * .what = where compaction marks outlive the process: a ref store (genBrainRefStore), whose compacted/ folder the CLI
 *         and every repl given the same store read and write
 */
export interface BrainCompactionMarks {
  markCompacted: (hashes: readonly string[]) => Promise<unknown>;
  isCompacted: (hash: string) => Promise<boolean>;
}

/**
 * .what = the hashes of episodes known compacted in this process: from every series seen, and every compaction made
 * .why = hashes only (64 bytes each), so this stays small however long the process runs
 */
const known = new Set<string>();

/**
 * .what = the episodes a series compacted: every episode but its last, each bridged to the next by a summary
 * .why = a property of the series ref itself: any process that holds a series knows which of its episodes are closed
 */
export const getCompactedEpisodes = (series: BrainSeries): readonly BrainEpisode[] => series.episodes.slice(0, -1);

/**
 * .what = learns the episodes a series compacted (getCompactedEpisodes), in this process; with marks (a ref store),
 *         records them there too, so that a later process refuses them
 * .why = an episode handed out before its compaction cannot carry the mark: its content and hash were fixed before
 *        anyone knew it would be compacted (changing either would break every ref to it); the series that compacted it,
 *        and the store beside the refs, can
 */
export const markEpisodesCompacted = async (series: BrainSeries, marks?: BrainCompactionMarks | null): Promise<void> => {
  const hashes = getCompactedEpisodes(series).map((episode) => episode.hash);
  for (const hash of hashes) known.add(hash);
  if (marks && hashes.length) await marks.markCompacted(hashes);
};

/** .what = whether an episode was compacted: by a series this process has seen, or as the marks (a ref store) record */
export const isEpisodeCompacted = async (hash: string, marks?: BrainCompactionMarks | null): Promise<boolean> =>
  known.has(hash) || ((await marks?.isCompacted(hash)) ?? false);

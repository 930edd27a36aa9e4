import type { BrainEpisode } from './BrainEpisode.js';
import { freezeDeep } from './freeze.js';
import { sha256hexOfFields } from './hash.js';

/**
 * .what = a chain of episodes bridged by compaction summaries
 * .why = a repl's unit of continuity across context windows: `{ on: { series } }` continues its latest episode
 *
 * .note = summaries[i] is the recap that bridged episodes[i] to episodes[i + 1];
 *         the recap is also the first exchange of episodes[i + 1]; the hash covers both
 */
export interface BrainSeries {
  /** content fingerprint: sha256 of the JSON array ["BrainSeries", exid, [episode hashes], [summaries]], hex */
  readonly hash: string;
  readonly exid: string | null;
  readonly episodes: readonly BrainEpisode[];
  readonly summaries: readonly string[];
}

/** .what = the fingerprint of a series: its exid, its episodes' fingerprints and its summaries, in order */
export const hashBrainSeries = (input: {
  episodes: readonly BrainEpisode[];
  summaries?: readonly string[];
  exid?: string | null;
}): string => sha256hexOfFields(['BrainSeries', input.exid ?? null, input.episodes.map((episode) => episode.hash), input.summaries ?? []]);

/** .what = creates a frozen series; fails when the summaries do not bridge the episodes one to one */
export const genBrainSeries = (input: {
  episodes: readonly BrainEpisode[];
  summaries?: readonly string[];
  exid?: string | null;
}): BrainSeries => {
  const summaries = input.summaries ?? [];
  if (summaries.length !== Math.max(0, input.episodes.length - 1))
    throw new Error(
      `a series of ${input.episodes.length} episodes needs ${Math.max(0, input.episodes.length - 1)} compaction summaries between them, got ${summaries.length}`,
    );
  return freezeDeep({
    hash: hashBrainSeries({ ...input, summaries }),
    exid: input.exid ?? null,
    episodes: [...input.episodes],
    summaries: [...summaries],
  });
};

/** .what = the first exchange of an episode that continues from a recap */
export const RECAP_PREFIX = '[recap: the earlier exchanges of this series were compacted into this summary]';

/**
 * .what = the compaction summaries of episodes that came without them (a series made by rhachet): the recap that opens
 *         each later episode, without RECAP_PREFIX; an episode that does not open with our recap gives its first input
 * .why = rhachet's series keep the recap only as the first exchange of each later episode, as ours do besides summaries
 */
export const getRecapSummaries = (episodes: ReadonlyArray<{ exchanges: ReadonlyArray<{ input: string }> }>): string[] =>
  episodes.slice(1).map((episode) => {
    const opening = episode.exchanges[0]?.input ?? '';
    return opening.startsWith(`${RECAP_PREFIX}\n`) ? opening.slice(RECAP_PREFIX.length + 1) : opening;
  });

/** .what = the series' current (last) episode, where `{ on: { series } }` continues */
export const getCurrentEpisode = (series: BrainSeries): BrainEpisode | null => series.episodes[series.episodes.length - 1] ?? null;

/** .what = a NEW series whose current episode is replaced by its continuation; the prior series is untouched */
export const replaceCurrentEpisode = (input: { series: BrainSeries; episode: BrainEpisode }): BrainSeries =>
  genBrainSeries({
    episodes: [...input.series.episodes.slice(0, -1), input.episode],
    summaries: input.series.summaries,
    exid: input.series.exid,
  });

/** .what = a NEW series that starts a fresh episode after a compaction, bridged by its summary */
export const appendCompactedEpisode = (input: { series: BrainSeries; summary: string; episode: BrainEpisode }): BrainSeries =>
  genBrainSeries({
    episodes: [...input.series.episodes, input.episode],
    summaries: [...input.series.summaries, input.summary],
    exid: input.series.exid,
  });

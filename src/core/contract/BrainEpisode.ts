import type { BrainExchange } from './BrainExchange.js';
import { freezeDeep } from './freeze.js';
import { sha256hexOfFields } from './hash.js';

/**
 * .what = one context window of exchanges, as of the moment it was created
 * .why = the unit of continuation: `{ on: { episode } }` resumes from exactly this state, any number of times
 */
export interface BrainEpisode {
  /** content fingerprint: sha256 of the JSON array ["BrainEpisode", exid, [exchange hashes]], hex */
  readonly hash: string;
  /** the supplier's own id for this episode (e.g. a CLI session id), when it has one */
  readonly exid: string | null;
  readonly exchanges: readonly BrainExchange[];
}

/** .what = the fingerprint of an episode: its exid and its exchanges' fingerprints, in order */
export const hashBrainEpisode = (input: { exchanges: readonly BrainExchange[]; exid?: string | null }): string =>
  sha256hexOfFields(['BrainEpisode', input.exid ?? null, input.exchanges.map((exchange) => exchange.hash)]);

/** .what = creates a frozen episode from exchanges */
export const genBrainEpisode = (input: { exchanges: readonly BrainExchange[]; exid?: string | null }): BrainEpisode =>
  freezeDeep({
    hash: hashBrainEpisode(input),
    exid: input.exid ?? null,
    exchanges: [...input.exchanges],
  });

/** .what = a NEW episode with one more exchange; the prior episode is untouched */
export const appendBrainExchange = (input: { episode: BrainEpisode | null; exchange: BrainExchange; exid?: string | null }): BrainEpisode =>
  genBrainEpisode({
    exchanges: [...(input.episode?.exchanges ?? []), input.exchange],
    exid: input.exid === undefined ? (input.episode?.exid ?? null) : input.exid,
  });

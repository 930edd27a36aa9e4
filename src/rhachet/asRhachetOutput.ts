import type { BrainEpisode } from '../core/contract/BrainEpisode.js';
import type { BrainOutputMetrics } from '../core/contract/BrainOutput.js';
import type { BrainSeries } from '../core/contract/BrainSeries.js';
import { freezeDeep } from '../core/contract/freeze.js';
import { RHACHET_HASH_RULE } from '../core/contract/parseBrainRef.js';
import type { IsoPrice, RhachetBrainEpisode, RhachetBrainOutputMetrics, RhachetBrainSeries } from './RhachetBrain.js';

// what a rhachet-shaped call gives back, made from ours: prices, metrics, and refs under rhachet's hash rule

/**
 * .what = an amount of USD as an IsoPrice in words form, in plain decimal digits: 0.000003 → 'USD 0.000003', 0 → 'USD 0'
 * .why = rhachet's prices are strings; String(0.00000005) would give '5e-8', which is not an amount. Twelve decimals
 *        hold every per-token rate in our tables exactly
 */
export const asIsoPrice = (usd: number): IsoPrice => `USD ${usd.toFixed(12).replace(/0+$/, '').replace(/\.$/, '')}`;

/**
 * .what = a call's metrics in rhachet's shape: the same sizes and time, every cash value an IsoPrice
 * .why = rhachet's cash is never null, and ours is null when the model's price is unknown (a self-hosted qwen or a model
 *        outside the table): such a call is reported as 'USD 0', since rhachet has no way to say "unknown"; the atom's
 *        description says its price is unknown
 */
export const asRhachetMetrics = (metrics: BrainOutputMetrics): RhachetBrainOutputMetrics => {
  const cash = metrics.cost.cash;
  return {
    size: metrics.size,
    cost: {
      time: { milliseconds: metrics.cost.time.milliseconds },
      cash: {
        total: asIsoPrice(cash?.total ?? 0),
        deets: {
          input: asIsoPrice(cash?.deets.input ?? 0),
          output: asIsoPrice(cash?.deets.output ?? 0),
          cache: { get: asIsoPrice(cash?.deets.cache.get ?? 0), set: asIsoPrice(cash?.deets.cache.set ?? 0) },
        },
      },
    },
  };
};

/**
 * .what = an episode of ours in rhachet's form: the same exchanges and exids, every hash under rhachet's rule
 * .why = rhachet's genBrainContinuables appends to it with that rule, so the chain stays consistent in rhachet's hands;
 *        asBhrainEpisode reads it back
 */
export const asRhachetEpisode = (episode: BrainEpisode): RhachetBrainEpisode => {
  const exchanges = episode.exchanges.map((exchange) => ({
    hash: RHACHET_HASH_RULE.exchange(exchange),
    input: exchange.input,
    output: exchange.output,
    exid: exchange.exid,
  }));
  return freezeDeep({ hash: RHACHET_HASH_RULE.episode({ hash: '', exid: episode.exid, exchanges }), exid: episode.exid, exchanges });
};

/**
 * .what = a series of ours in rhachet's form: its episodes in rhachet's form, hashed under rhachet's rule, without summaries
 * .why = rhachet's series have none: each summary is also the recap that opens the episode after it, where
 *        asBhrainSeries finds it again
 */
export const asRhachetSeries = (series: BrainSeries): RhachetBrainSeries => {
  const episodes = series.episodes.map(asRhachetEpisode);
  return freezeDeep({
    hash: RHACHET_HASH_RULE.series({ hash: '', exid: series.exid, episodes, summaries: [] }),
    exid: series.exid,
    episodes,
  });
};

import { genBrainEpisode, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import { genBrainSeries, type BrainSeries } from '../contract/BrainSeries.js';

/**
 * .what = an episode whose exchanges have secrets replaced; the same episode (same hash) when there was none
 * .why = the model's answer can carry a secret it decoded from a form redaction cannot match (base64, reversed);
 *        the refs store keeps answers forever, so refs are redacted before they are hashed and saved
 */
export const redactBrainEpisode = (episode: BrainEpisode, redact: (text: string) => string): BrainEpisode => {
  const exchanges = episode.exchanges.map((exchange) => {
    const input = redact(exchange.input);
    const output = redact(exchange.output);
    return input === exchange.input && output === exchange.output ? exchange : genBrainExchange({ input, output, exid: exchange.exid });
  });
  return exchanges.every((exchange, index) => exchange === episode.exchanges[index])
    ? episode
    : genBrainEpisode({ exchanges, exid: episode.exid });
};

/** .what = a series whose episodes and summaries have secrets replaced; the same series when there was none */
export const redactBrainSeries = (series: BrainSeries, redact: (text: string) => string): BrainSeries => {
  const episodes = series.episodes.map((episode) => redactBrainEpisode(episode, redact));
  const summaries = series.summaries.map(redact);
  const unchanged =
    episodes.every((episode, index) => episode === series.episodes[index]) &&
    summaries.every((summary, index) => summary === series.summaries[index]);
  return unchanged ? series : genBrainSeries({ episodes, summaries, exid: series.exid });
};

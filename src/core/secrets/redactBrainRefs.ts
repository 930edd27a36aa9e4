import { genBrainEpisode, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange, type BrainExchange, type BrainExchangeStep } from '../contract/BrainExchange.js';
import { genBrainSeries, type BrainSeries } from '../contract/BrainSeries.js';
import { redactDeep } from './redactDeep.js';

/** .what = a turn's steps with secrets replaced in what the model said, every tool input (keys too) and every result */
const redactSteps = (steps: readonly BrainExchangeStep[], redact: (text: string) => string): BrainExchangeStep[] =>
  steps.map((step) => ({
    said: redact(step.said),
    calls: step.calls.map((call) => ({
      name: redact(call.name),
      input: redactDeep(call.input, redact),
      result: redact(call.result),
      isError: call.isError,
    })),
  }));

/** .what = an exchange with secrets replaced in every text it holds; the same exchange (same hash) when there was none */
const redactExchange = (exchange: BrainExchange, redact: (text: string) => string): BrainExchange => {
  const redacted = genBrainExchange({
    input: redact(exchange.input),
    output: redact(exchange.output),
    exid: exchange.exid,
    steps: exchange.steps ? redactSteps(exchange.steps, redact) : null,
  });
  return redacted.hash === exchange.hash ? exchange : redacted;
};

/**
 * .what = an episode whose exchanges have secrets replaced, their tool calls and results too; the same episode (same
 *         hash) when there was none
 * .why = the model's answer can carry a secret it decoded from a form redaction cannot match (base64, reversed);
 *        the refs store keeps answers forever, so refs are redacted before they are hashed and saved
 */
export const redactBrainEpisode = (episode: BrainEpisode, redact: (text: string) => string): BrainEpisode => {
  const exchanges = episode.exchanges.map((exchange) => redactExchange(exchange, redact));
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

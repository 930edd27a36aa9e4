import { hashBrainEpisode, type BrainEpisode } from './BrainEpisode.js';
import { hashBrainExchange, type BrainExchangeToolCall } from './BrainExchange.js';
import { hashBrainSeries, type BrainSeries } from './BrainSeries.js';
import { BadRequestError } from './errors.js';

/** .what = whether an exchange's steps, when it has any, are steps: what its hash reads */
const areStepsShaped = (steps: unknown): boolean =>
  steps === undefined ||
  (Array.isArray(steps) &&
    steps.every(
      (step) =>
        typeof step?.said === 'string' &&
        Array.isArray(step.calls) &&
        step.calls.every(
          (call: Partial<BrainExchangeToolCall> | null) =>
            typeof call?.name === 'string' &&
            !!call.input &&
            typeof call.input === 'object' &&
            typeof call.result === 'string' &&
            typeof call.isError === 'boolean',
        ),
    ));

const isEpisodeShaped = (value: unknown): value is BrainEpisode =>
  !!value &&
  typeof (value as BrainEpisode).hash === 'string' &&
  Array.isArray((value as BrainEpisode).exchanges) &&
  (value as BrainEpisode).exchanges.every(
    (exchange) => typeof exchange?.input === 'string' && typeof exchange?.output === 'string' && areStepsShaped(exchange.steps),
  );

/** .what = whether an episode's hashes match its content (untouched since it was created) */
const isEpisodeIntact = (episode: BrainEpisode): boolean =>
  episode.exchanges.every((exchange) => exchange.hash === hashBrainExchange(exchange)) && episode.hash === hashBrainEpisode(episode);

/**
 * .what = fails unless a continuation ref is a real, intact episode
 * .why = explicit continuation fails explicitly: a bad ref never silently starts a new conversation
 */
export const assertBrainEpisode = (value: unknown): BrainEpisode => {
  if (!isEpisodeShaped(value) || !isEpisodeIntact(value))
    throw new BadRequestError(
      'episode not found or invalid: on.episode is not an intact BrainEpisode (its hash does not match its exchanges, or it is not an episode at all). Start a new episode by calling without `on`, or pass an episode returned by a prior call',
    );
  return value;
};

/** .what = fails unless a continuation ref is a real, intact series */
export const assertBrainSeries = (value: unknown): BrainSeries => {
  const series = value as BrainSeries;
  const valid =
    !!series &&
    typeof series.hash === 'string' &&
    Array.isArray(series.episodes) &&
    series.episodes.length > 0 &&
    Array.isArray(series.summaries) &&
    series.summaries.every((summary) => typeof summary === 'string') &&
    series.episodes.every((episode) => isEpisodeShaped(episode) && isEpisodeIntact(episode)) &&
    series.hash === hashBrainSeries(series);
  if (!valid)
    throw new BadRequestError(
      'series not found or invalid: on.series is not an intact BrainSeries (its hash does not match its episodes, or it is not a series at all). Start a new series by calling without `on`, or pass a series returned by a prior call',
    );
  return series;
};

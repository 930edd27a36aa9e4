import { z } from 'zod';

import { genBrainEpisode, type BrainEpisode } from './BrainEpisode.js';
import { genBrainExchange } from './BrainExchange.js';
import { genBrainSeries, type BrainSeries } from './BrainSeries.js';
import { BadRequestError } from './errors.js';

/**
 * .what = the version of the persisted shape of episodes and series
 * .why = refs outlive processes; a reader refuses versions it does not know instead of misreading them
 *
 * .changelog
 *   1 = { schemaVersion, kind, hash, exid, exchanges } and { schemaVersion, kind, hash, exid, episodes, summaries }
 */
export const BRAIN_REF_SCHEMA_VERSION = 1;

const schemaExchange = z.object({ hash: z.string(), input: z.string(), output: z.string(), exid: z.string().nullable() });
const schemaEpisode = z.object({ hash: z.string(), exid: z.string().nullable(), exchanges: z.array(schemaExchange) });
const schemaSeries = z.object({
  hash: z.string(),
  exid: z.string().nullable(),
  episodes: z.array(schemaEpisode),
  summaries: z.array(z.string()),
});
const schemaEnvelope = z.object({ schemaVersion: z.number(), kind: z.enum(['BrainEpisode', 'BrainSeries']) });

/** .what = plain JSON for an episode, with its schema version, for persistence and transfer */
export const serializeBrainEpisode = (episode: BrainEpisode): string =>
  JSON.stringify({ schemaVersion: BRAIN_REF_SCHEMA_VERSION, kind: 'BrainEpisode', ...episode });

/** .what = plain JSON for a series, with its schema version, for persistence and transfer */
export const serializeBrainSeries = (series: BrainSeries): string =>
  JSON.stringify({ schemaVersion: BRAIN_REF_SCHEMA_VERSION, kind: 'BrainSeries', ...series });

const readEnvelope = (text: string, kind: 'BrainEpisode' | 'BrainSeries'): unknown => {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`not a serialized ${kind}: the text is not JSON (${(error as Error).message})`);
  }
  const envelope = schemaEnvelope.safeParse(json);
  if (!envelope.success)
    throw new BadRequestError(`not a serialized ${kind}: schemaVersion and kind are missing`);
  if (envelope.data.kind !== kind)
    throw new BadRequestError(`expected a serialized ${kind}, got a ${envelope.data.kind}`);
  if (envelope.data.schemaVersion !== BRAIN_REF_SCHEMA_VERSION)
    throw new BadRequestError(
      `cannot read a ${kind} of schemaVersion ${envelope.data.schemaVersion}: this bhrain reads schemaVersion ${BRAIN_REF_SCHEMA_VERSION}; upgrade bhrain to read it`,
    );
  return json;
};

const rebuildEpisode = (raw: z.infer<typeof schemaEpisode>): BrainEpisode => {
  const episode = genBrainEpisode({
    exid: raw.exid,
    exchanges: raw.exchanges.map((exchange) => {
      const rebuilt = genBrainExchange(exchange);
      if (rebuilt.hash !== exchange.hash)
        throw new BadRequestError(
          `corrupt exchange: its content hashes to ${rebuilt.hash} but it claims ${exchange.hash}; the ref was altered or damaged`,
        );
      return rebuilt;
    }),
  });
  if (episode.hash !== raw.hash)
    throw new BadRequestError(
      `corrupt episode: its exchanges hash to ${episode.hash} but it claims ${raw.hash}; the ref was altered or damaged`,
    );
  return episode;
};

/** .what = reads a serialized episode back, verifying every hash, so a damaged ref is never served */
export const parseBrainEpisode = (text: string): BrainEpisode => {
  const parsed = schemaEpisode.safeParse(readEnvelope(text, 'BrainEpisode'));
  if (!parsed.success) throw new BadRequestError(`malformed BrainEpisode: ${z.prettifyError(parsed.error)}`);
  return rebuildEpisode(parsed.data);
};

/** .what = reads a serialized series back, verifying every hash, so a damaged ref is never served */
export const parseBrainSeries = (text: string): BrainSeries => {
  const parsed = schemaSeries.safeParse(readEnvelope(text, 'BrainSeries'));
  if (!parsed.success) throw new BadRequestError(`malformed BrainSeries: ${z.prettifyError(parsed.error)}`);
  const series = genBrainSeries({
    exid: parsed.data.exid,
    episodes: parsed.data.episodes.map(rebuildEpisode),
    summaries: parsed.data.summaries,
  });
  if (series.hash !== parsed.data.hash)
    throw new BadRequestError(
      `corrupt series: its episodes hash to ${series.hash} but it claims ${parsed.data.hash}; the ref was altered or damaged`,
    );
  return series;
};

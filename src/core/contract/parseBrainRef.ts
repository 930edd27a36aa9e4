import * as z from 'zod';

import type { BrainLog } from './BrainContext.js';
import { genBrainEpisode, hashBrainEpisode, type BrainEpisode } from './BrainEpisode.js';
import { genBrainExchange, hashBrainExchange, type BrainExchangeStep } from './BrainExchange.js';
import { genBrainSeries, getRecapSummaries, hashBrainSeries, type BrainSeries } from './BrainSeries.js';
import { BadRequestError, RefSchemaVersionError } from './errors.js';
import { sha256hex } from './hash.js';
import { BRAIN_REF_SCHEMA_VERSION } from './serializeBrainRef.js';

// reading refs back lives apart from writing them (serializeBrainRef.ts): it needs zod, which a run that only writes
// its refs never loads

type RawExchange = { hash: string; input: string; output: string; exid: string | null; steps?: readonly BrainExchangeStep[] };
type RawEpisode = { hash: string; exid: string | null; exchanges: readonly RawExchange[] };
type RawSeries = { hash: string; exid: string | null; episodes: readonly RawEpisode[]; summaries: readonly string[] };

/** .what = each readable schemaVersion's hash rule: what a stored hash must equal for the ref to verify */
const HASH_RULES: Record<
  number,
  { exchange: (raw: RawExchange) => string; episode: (raw: RawEpisode) => string; series: (raw: RawSeries) => string }
> = {
  1: {
    exchange: (raw) => sha256hex(`${raw.input}\n${raw.output}`),
    episode: (raw) => sha256hex(raw.exchanges.map((exchange) => exchange.hash).join('\n')),
    series: (raw) => sha256hex(raw.episodes.map((episode) => episode.hash).join('\n')),
  },
  // schemaVersion 2 had no steps (its schema drops any): its exchanges hash as schemaVersion 3's without steps
  2: { exchange: hashBrainExchange, episode: hashBrainEpisode, series: hashBrainSeries },
  3: { exchange: hashBrainExchange, episode: hashBrainEpisode, series: hashBrainSeries },
};

/**
 * .what = the hash rule of refs made by rhachet's genBrainContinuables: schemaVersion 1's (exchange = sha256 of input +
 *         "\n" + output, exid left out; episode and series = sha256 of their children's hashes joined by "\n")
 * .why = one copy of the rule serves reading rhachet's refs and writing ours in rhachet's form (asRhachetRef)
 */
export const RHACHET_HASH_RULE_VERSION = 1;

/** .what = rhachet's hash rule itself: what each hash of a rhachet-made exchange, episode and series must equal */
export const RHACHET_HASH_RULE = HASH_RULES[RHACHET_HASH_RULE_VERSION];

const schemaExchange = z.object({ hash: z.string(), input: z.string(), output: z.string(), exid: z.string().nullable() });
const schemaEpisode = z.object({ hash: z.string(), exid: z.string().nullable(), exchanges: z.array(schemaExchange) });
const schemaSeries = z.object({
  hash: z.string(),
  exid: z.string().nullable(),
  episodes: z.array(schemaEpisode).min(1),
  summaries: z.array(z.string()),
});
// schemaVersion 3: an exchange may hold the steps of its turn (its tool calls and their results)
const schemaToolCall = z.object({
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  result: z.string(),
  isError: z.boolean(),
});
const schemaStep = z.object({ said: z.string(), calls: z.array(schemaToolCall) });
const schemaEpisodeV3 = schemaEpisode.extend({ exchanges: z.array(schemaExchange.extend({ steps: z.array(schemaStep).optional() })) });
const schemaSeriesV3 = schemaSeries.extend({ episodes: z.array(schemaEpisodeV3).min(1) });

const schemaEnvelope = z.object({ schemaVersion: z.number(), kind: z.enum(['BrainEpisode', 'BrainSeries']) });
// rhachet's series carry no summaries: the recap that bridged two episodes is only the first exchange of the later one
const schemaRhachetSeries = schemaSeries.omit({ summaries: true });

type Kind = 'BrainEpisode' | 'BrainSeries';

/** .what = the shape a ref of this kind and schemaVersion must have */
const schemaOf = (kind: Kind, schemaVersion: number) => {
  const withSteps = schemaVersion >= 3;
  if (kind === 'BrainEpisode') return withSteps ? schemaEpisodeV3 : schemaEpisode;
  return withSteps ? schemaSeriesV3 : schemaSeries;
};

/** .what = whether JSON without an envelope has the shape rhachet writes for this kind ({ hash, exid, exchanges | episodes }) */
const isRhachetShaped = (json: unknown, kind: Kind): boolean =>
  !!json &&
  typeof json === 'object' &&
  !('schemaVersion' in json) &&
  !('kind' in json) &&
  typeof (json as { hash?: unknown }).hash === 'string' &&
  Array.isArray((json as Record<string, unknown>)[kind === 'BrainEpisode' ? 'exchanges' : 'episodes']);

/** reads the envelope; schemaVersion null = no envelope, in the shape rhachet writes (see readRhachetRef) */
const readEnvelope = (text: string, kind: Kind): { json: unknown; schemaVersion: number | null } => {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`not a serialized ${kind}: the text is not JSON (${(error as Error).message})`);
  }
  const envelope = schemaEnvelope.safeParse(json);
  if (!envelope.success && isRhachetShaped(json, kind)) return { json, schemaVersion: null };
  if (!envelope.success) throw new BadRequestError(`not a serialized ${kind}: schemaVersion and kind are missing`);
  if (envelope.data.kind !== kind) throw new BadRequestError(`expected a serialized ${kind}, got a ${envelope.data.kind}`);
  if (!HASH_RULES[envelope.data.schemaVersion])
    throw new RefSchemaVersionError(
      `cannot read a ${kind} of schemaVersion ${envelope.data.schemaVersion}: this bhrain reads schemaVersion ${Object.keys(HASH_RULES).slice(0, -1).join(', ')} and ${Object.keys(HASH_RULES).at(-1)}; upgrade bhrain to read it`,
    );
  return { json, schemaVersion: envelope.data.schemaVersion };
};

const corrupt = (what: string, computed: string, claimed: string, of: string) =>
  new BadRequestError(`corrupt ${what}: its ${of} hash to ${computed} but it claims ${claimed}; the ref was altered or damaged`);

/** verifies an episode under its version's rule, then rebuilds it under the current one */
const rebuildEpisode = (raw: RawEpisode, schemaVersion: number): BrainEpisode => {
  const rule = HASH_RULES[schemaVersion];
  for (const exchange of raw.exchanges) {
    const computed = rule.exchange(exchange);
    if (computed !== exchange.hash)
      throw new BadRequestError(
        `corrupt exchange: its content hashes to ${computed} but it claims ${exchange.hash}; the ref was altered or damaged`,
      );
  }
  const computed = rule.episode(raw);
  if (computed !== raw.hash) throw corrupt('episode', computed, raw.hash, 'exchanges');
  return genBrainEpisode({ exid: raw.exid, exchanges: raw.exchanges.map((exchange) => genBrainExchange(exchange)) });
};

/** verifies a series under its version's rule, then rebuilds it under the current one */
const rebuildSeries = (raw: RawSeries, schemaVersion: number): BrainSeries => {
  if (raw.summaries.length !== raw.episodes.length - 1)
    throw new BadRequestError(
      `malformed BrainSeries: ${raw.episodes.length} episodes need ${raw.episodes.length - 1} compaction summaries between them, it holds ${raw.summaries.length}`,
    );
  const episodes = raw.episodes.map((episode) => rebuildEpisode(episode, schemaVersion));
  const computed = HASH_RULES[schemaVersion].series(raw);
  if (computed !== raw.hash) throw corrupt('series', computed, raw.hash, 'episodes');
  return genBrainSeries({ exid: raw.exid, episodes, summaries: raw.summaries });
};

/**
 * .what = a ref made by rhachet (an episode, or a series without summaries), verified under rhachet's hash rule and
 *         rebuilt as ours; a series' summaries are the recaps that open its later episodes (getRecapSummaries)
 * .why = a ref that does not verify is refused (BadRequestError), whoever made it: rhachet never verifies what it gets
 */
export function readRhachetRef(input: { value: unknown; kind: 'BrainEpisode' }): BrainEpisode;
export function readRhachetRef(input: { value: unknown; kind: 'BrainSeries' }): BrainSeries;
export function readRhachetRef(input: { value: unknown; kind: Kind }): BrainEpisode | BrainSeries;
export function readRhachetRef(input: { value: unknown; kind: Kind }): BrainEpisode | BrainSeries {
  if (input.kind === 'BrainEpisode') {
    const parsed = schemaEpisode.safeParse(input.value);
    if (!parsed.success) throw new BadRequestError(`malformed BrainEpisode: ${z.prettifyError(parsed.error)}`);
    return rebuildEpisode(parsed.data, RHACHET_HASH_RULE_VERSION);
  }
  const parsed = schemaRhachetSeries.safeParse(input.value);
  if (!parsed.success) throw new BadRequestError(`malformed BrainSeries: ${z.prettifyError(parsed.error)}`);
  return rebuildSeries({ ...parsed.data, summaries: getRecapSummaries(parsed.data.episodes) }, RHACHET_HASH_RULE_VERSION);
}

/** .what = a ref read back from its serialized form, with the hash and version it was stored under */
export interface ParsedBrainRef<T> {
  ref: T;
  /** the hash the text claims: the ref's own hash, unless it was migrated from an older schemaVersion */
  storedHash: string;
  /** the schemaVersion the text was written in; a ref made by rhachet (no envelope) reads as 1, the rule its hashes follow */
  storedSchemaVersion: number;
}

/**
 * .what = reads a serialized episode or series back, verifying every hash under the rule of the version it was written
 *         in; a ref of an older version is rehashed under the current rule, with a notice through context.log
 * .why = a damaged or edited ref is never served; refs printed by an older bhrain keep working, and the user is told
 *        that their hash changed rather than finding out later
 */
export function parseBrainRef(input: { text: string; kind: 'BrainEpisode' }, context?: { log?: BrainLog }): ParsedBrainRef<BrainEpisode>;
export function parseBrainRef(input: { text: string; kind: 'BrainSeries' }, context?: { log?: BrainLog }): ParsedBrainRef<BrainSeries>;
export function parseBrainRef(
  input: { text: string; kind: Kind },
  context?: { log?: BrainLog },
): ParsedBrainRef<BrainEpisode | BrainSeries>;
export function parseBrainRef(
  input: { text: string; kind: Kind },
  context: { log?: BrainLog } = {},
): ParsedBrainRef<BrainEpisode | BrainSeries> {
  const { json, schemaVersion } = readEnvelope(input.text, input.kind);
  const noun = input.kind === 'BrainEpisode' ? 'episode' : 'series';
  if (schemaVersion === null) {
    const ref = readRhachetRef({ value: json, kind: input.kind });
    const storedHash = (json as { hash: string }).hash;
    context.log?.warn(
      `the ${noun} ${storedHash} was made by rhachet (no schemaVersion; its hashes follow rhachet's rule, bhrain's schemaVersion ${RHACHET_HASH_RULE_VERSION} rule, which does not cover every field unambiguously): it verified under that rule and is read as schemaVersion ${BRAIN_REF_SCHEMA_VERSION}, where its hash is ${ref.hash}${
        input.kind === 'BrainSeries' ? '; its compaction summaries are the recaps that open its later episodes' : ''
      }; refs printed from now on follow the new rule (asRhachetEpisode / asRhachetSeries give rhachet's form back)`,
    );
    return { ref, storedHash, storedSchemaVersion: RHACHET_HASH_RULE_VERSION };
  }
  const parsed = schemaOf(input.kind, schemaVersion).safeParse(json);
  if (!parsed.success) throw new BadRequestError(`malformed ${input.kind}: ${z.prettifyError(parsed.error)}`);
  const raw = parsed.data as RawEpisode | RawSeries;
  const ref =
    input.kind === 'BrainEpisode' ? rebuildEpisode(raw as RawEpisode, schemaVersion) : rebuildSeries(raw as RawSeries, schemaVersion);
  // a ref of an older version whose hash the current rule keeps (schemaVersion 2, which had no steps) is read silently
  if (ref.hash !== raw.hash) {
    context.log?.warn(
      `the ${noun} ${raw.hash} was saved by an older bhrain (schemaVersion ${schemaVersion}, whose hashes did not cover every field unambiguously): it verified under that version's rule and is read as schemaVersion ${BRAIN_REF_SCHEMA_VERSION}, where its hash is ${ref.hash}; refs printed from now on follow the new rule`,
    );
  }
  return { ref, storedHash: raw.hash, storedSchemaVersion: schemaVersion };
}

/** .what = reads a serialized episode back, verifying every hash, so a damaged ref is never served */
export const parseBrainEpisode = (text: string, context: { log?: BrainLog } = {}): BrainEpisode =>
  parseBrainRef({ text, kind: 'BrainEpisode' }, context).ref;

/** .what = reads a serialized series back, verifying every hash, so a damaged ref is never served */
export const parseBrainSeries = (text: string, context: { log?: BrainLog } = {}): BrainSeries =>
  parseBrainRef({ text, kind: 'BrainSeries' }, context).ref;

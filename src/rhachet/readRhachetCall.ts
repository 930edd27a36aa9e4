import { credentialEnvVarsOf, SUPPLIER_TABLE } from '../core/contract/supplierTable.js';
import type * as z from 'zod';

import type { BhrainContext } from '../agent/BhrainContext.js';
import { assertBrainEpisode, assertBrainSeries } from '../core/contract/assertBrainRef.js';
import type { BrainEpisode } from '../core/contract/BrainEpisode.js';
import type { BrainSeries } from '../core/contract/BrainSeries.js';
import { BadRequestError } from '../core/contract/errors.js';
import { readRhachetRef } from '../core/contract/parseBrainRef.js';
import type { RhachetBrainContext, RhachetBrief, RhachetSchema } from './RhachetBrain.js';

// what a rhachet-shaped call brings, read as ours: its context and creds, its on refs, its output schema, its briefs

const SUPPLIES = 'brain.supplier.bhrain';

/** the first key variable of each supplier, as errors show a getter's record */
const EXAMPLE_KEYS = SUPPLIER_TABLE.map((row) => row.keyEnvVars[0]).join(', ');

/** .what = the keys of the creds getter's record, read into our creds: the first one set wins */
const readKeys = (keys: Record<string, string | undefined>, names: readonly string[]): string | undefined =>
  names.map((name) => keys[name]).find((value) => !!value);

/**
 * .what = the context of a rhachet-shaped call as ours: context['brain.supplier.bhrain'].creds, an async getter of keys,
 *         read into context.creds by the supplier table: each supplier's token and key variables, first set wins, and
 *         its URL variable; our own fields pass through
 * .why = rhachet binds each supplier's creds under its repo's key; a key given this way is the caller's explicit choice,
 *        so the environment is not read for another (as with context.creds); context.creds fields of the same call win
 * .note = a keyrack reference needs rhachet's keyrack, which bhrain does not depend on: refused with how to pass a getter
 */
export const asBhrainContext = async (context: RhachetBrainContext = {}): Promise<BhrainContext> => {
  const { [SUPPLIES]: supplies, ...ours } = context;
  if (!supplies || supplies.creds === null || supplies.creds === undefined) return ours;
  const creds = supplies.creds;
  if (typeof creds !== 'function')
    throw new BadRequestError(
      'keyrack' in (creds as object)
        ? `context['${SUPPLIES}'].creds is a keyrack reference ({ keyrack: { owner, env } }), which needs rhachet's keyrack to unlock, and bhrain does not depend on rhachet. Pass an async getter instead: creds: async () => ({ ${EXAMPLE_KEYS} }), or give context.creds`
        : `context['${SUPPLIES}'].creds must be an async getter of keys (creds: async () => ({ ${EXAMPLE_KEYS} })), got ${typeof creds}`,
    );
  let keys: Record<string, string | undefined>;
  try {
    keys = await creds();
  } catch (error) {
    throw new BadRequestError(
      `the creds getter of context['${SUPPLIES}'] failed: ${(error as Error)?.message ?? error}. Check the credential source it reads (vault, kms, db)`,
      { cause: error },
    );
  }
  if (!keys || typeof keys !== 'object')
    throw new BadRequestError(
      `the creds getter of context['${SUPPLIES}'] must resolve to a record of keys, e.g. { ${EXAMPLE_KEYS} }, got ${JSON.stringify(keys)}`,
    );
  return {
    ...ours,
    creds: Object.fromEntries(
      SUPPLIER_TABLE.map((row) => [
        row.supplier,
        {
          apiKey: ours.creds?.[row.supplier]?.apiKey ?? readKeys(keys, credentialEnvVarsOf(row)),
          url: ours.creds?.[row.supplier]?.url ?? readKeys(keys, [row.urlEnvVar]),
        },
      ]),
    ),
  };
};

/** .what = a ref verified under our rule, else under rhachet's (then rebuilt as ours), else refused as tampered */
const asBhrainRef = <T>(value: unknown, kind: 'BrainEpisode' | 'BrainSeries', ours: (value: unknown) => T): T => {
  try {
    return ours(value);
  } catch {
    try {
      return readRhachetRef({ value, kind }) as T;
    } catch (error) {
      const noun = kind === 'BrainEpisode' ? 'episode' : 'series';
      throw new BadRequestError(
        `${noun} not found or invalid: on.${noun} verifies neither under bhrain's hash rule nor under rhachet's (${(error as Error).message}). It was altered or damaged, or it is not a ${kind}: start a new ${noun} by calling without \`on\`, or pass a${noun === 'episode' ? 'n' : ''} ${noun} returned by a prior call`,
        { cause: error },
      );
    }
  }
};

/**
 * .what = an episode as ours, whoever made it: one of ours (verified under our rule) or one made by rhachet (verified
 *         under rhachet's rule, then rehashed under ours); a ref that verifies under neither is a BadRequestError
 * .why = episodes move both ways between rhachet and bhrain, and a tampered one is never continued
 */
export const asBhrainEpisode = (value: unknown): BrainEpisode => asBhrainRef(value, 'BrainEpisode', assertBrainEpisode);

/**
 * .what = a series as ours, whoever made it; a rhachet series (no summaries) gets the recaps that open its later episodes
 *         as its summaries, so a single-episode one gets none
 */
export const asBhrainSeries = (value: unknown): BrainSeries => asBhrainRef(value, 'BrainSeries', assertBrainSeries);

/**
 * .what = rhachet's schema.output as our output schema, or null when it asks for plain text: a schema whose JSON Schema
 *         is { type: 'string' } (z.string()) is answered with the model's text, no JSON demanded
 * .why = rhachet always passes a schema; the caller's zod may be another copy than ours, so only its own methods are used
 */
export const asOutputSchema = <T>(schema: RhachetSchema<T> | undefined): z.ZodType<T> | null => {
  if (!schema) return null;
  if (typeof schema.safeParse !== 'function' || typeof schema.toJSONSchema !== 'function')
    throw new BadRequestError(
      'schema.output must be a zod schema with safeParse() and toJSONSchema() (zod 4.1 or newer), e.g. z.object({ ... }), or z.string() for a text answer',
    );
  const { $schema: _, description: __, ...rest } = schema.toJSONSchema() as Record<string, unknown>;
  return rest.type === 'string' && Object.keys(rest).length === 1 ? null : (schema as unknown as z.ZodType<T>);
};

/**
 * .what = the briefs' contents joined by a blank line, as rhachet's castBriefsToPrompt joins them; undefined when none
 * .why = briefs are the role's system prompt; a brief whose file is gone (get() gives null) or is empty is left out
 */
export const readBriefs = async (briefs: readonly RhachetBrief[] | undefined): Promise<string | undefined> => {
  const contents = await Promise.all((briefs ?? []).map(async (brief) => (await brief.get())?.content));
  return contents.filter((content): content is string => !!content).join('\n\n') || undefined;
};

import { freezeDeep } from './freeze.js';
import { sha256hexOfFields } from './hash.js';

/**
 * .what = one request-response round trip with a brain: what was said and what came back
 * .why = the smallest unit of conversation state; episodes are ordered lists of these
 */
export interface BrainExchange {
  /** content fingerprint: sha256 of the JSON array ["BrainExchange", input, output, exid], hex; computed, never set */
  readonly hash: string;
  readonly input: string;
  readonly output: string;
  /** the supplier's own id for this exchange, when it has one */
  readonly exid: string | null;
}

/**
 * .what = the fingerprint of an exchange: every field, in an unambiguous encoding (see sha256hexOfFields)
 * .why = text moved between the input and the output (the user's words made the assistant's) changes the hash
 */
export const hashBrainExchange = (input: { input: string; output: string; exid?: string | null }): string =>
  sha256hexOfFields(['BrainExchange', input.input, input.output, input.exid ?? null]);

/** .what = creates a frozen exchange; the hash is derived from the content, so it cannot disagree with it */
export const genBrainExchange = (input: { input: string; output: string; exid?: string | null }): BrainExchange =>
  freezeDeep({
    hash: hashBrainExchange(input),
    input: input.input,
    output: input.output,
    exid: input.exid ?? null,
  });

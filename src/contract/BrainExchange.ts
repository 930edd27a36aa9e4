import { freezeDeep } from './freeze.js';
import { sha256hex } from './hash.js';

/**
 * .what = one request-response round trip with a brain: what was said and what came back
 * .why = the smallest unit of conversation state; episodes are ordered lists of these
 */
export interface BrainExchange {
  /** content fingerprint: sha256(input + "\n" + output), hex; computed, never set */
  readonly hash: string;
  readonly input: string;
  readonly output: string;
  /** the supplier's own id for this exchange, when it has one */
  readonly exid: string | null;
}

/** .what = the fingerprint of an exchange's content */
export const hashBrainExchange = (input: { input: string; output: string }): string =>
  sha256hex(`${input.input}\n${input.output}`);

/** .what = creates a frozen exchange; the hash is derived from the content, so it cannot disagree with it */
export const genBrainExchange = (input: { input: string; output: string; exid?: string | null }): BrainExchange =>
  freezeDeep({
    hash: hashBrainExchange(input),
    input: input.input,
    output: input.output,
    exid: input.exid ?? null,
  });

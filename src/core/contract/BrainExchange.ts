import { freezeDeep } from './freeze.js';
import { sha256hexOfFields, type BrainHashField } from './hash.js';

/** .what = one tool call the model made inside an exchange: the tool, its input, and its result as the model read it */
export interface BrainExchangeToolCall {
  readonly name: string;
  readonly input: Record<string, unknown>;
  /** the result exactly as it went into the model's context: cut where the loop cut it, with the loop's notice */
  readonly result: string;
  readonly isError: boolean;
}

/** .what = one response of the model inside an exchange that called tools: what it said with them, the calls and their results */
export interface BrainExchangeStep {
  readonly said: string;
  readonly calls: readonly BrainExchangeToolCall[];
}

/**
 * .what = one request-response round trip with a brain: what was said, what the model did on the way (its tool calls
 *         and their results), and what came back
 * .why = the smallest unit of conversation state; episodes are ordered lists of these. A continuation rebuilds the
 *        whole turn from it, not just its two ends
 */
export interface BrainExchange {
  /** content fingerprint: sha256 of the JSON array ["BrainExchange", input, output, exid(, steps)], hex; computed, never set */
  readonly hash: string;
  readonly input: string;
  readonly output: string;
  /** the supplier's own id for this exchange, when it has one */
  readonly exid: string | null;
  /** the model's tool-calling responses between input and output, in order; absent when it called no tool */
  readonly steps?: readonly BrainExchangeStep[];
}

/** .what = what an exchange is made from: its content, without the hash */
export type BrainExchangeContent = {
  input: string;
  output: string;
  exid?: string | null;
  steps?: readonly BrainExchangeStep[] | null;
};

/** .what = a step as hash fields: [said, [[name, input JSON, result, 'error' | 'ok'], ...]] */
const stepFields = (step: BrainExchangeStep): BrainHashField[] => [
  step.said,
  step.calls.map((call) => [call.name, JSON.stringify(call.input), call.result, call.isError ? 'error' : 'ok']),
];

/**
 * .what = the fingerprint of an exchange: every field, in an unambiguous encoding (see sha256hexOfFields); the steps
 *         are a fifth field only when there are any
 * .why = text moved between fields (the user's words made the assistant's) changes the hash, and so does any tool call,
 *        input or result: two runs that did different things never share a hash. An exchange without steps hashes as
 *        it did before steps existed (schemaVersion 2), so those refs keep their hashes
 */
export const hashBrainExchange = (input: BrainExchangeContent): string =>
  sha256hexOfFields([
    'BrainExchange',
    input.input,
    input.output,
    input.exid ?? null,
    ...(input.steps?.length ? [input.steps.map(stepFields)] : []),
  ]);

/** .what = steps as plain JSON values: each call's input a JSON copy (the caller's object is neither kept nor frozen) */
const copySteps = (steps: readonly BrainExchangeStep[]): BrainExchangeStep[] =>
  steps.map((step) => ({
    said: step.said,
    calls: step.calls.map((call) => ({
      name: call.name,
      input: JSON.parse(JSON.stringify(call.input ?? {})) as Record<string, unknown>,
      result: call.result,
      isError: call.isError,
    })),
  }));

/**
 * .what = creates a frozen exchange; the hash is derived from the content as kept, so it cannot disagree with it
 * .note = steps are kept only when there are any: an exchange without them has the fields and the hash it had before
 *         steps existed
 */
export const genBrainExchange = (input: BrainExchangeContent): BrainExchange => {
  const steps = input.steps?.length ? copySteps(input.steps) : null;
  return freezeDeep({
    hash: hashBrainExchange({ ...input, steps }),
    input: input.input,
    output: input.output,
    exid: input.exid ?? null,
    ...(steps ? { steps } : {}),
  });
};

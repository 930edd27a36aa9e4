import type { BrainAtom, BrainThinking } from '../../core/contract/BrainAtom.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { getSupplierFacts } from '../../core/contract/supplierTable.js';
import { checkThinking, type AtomCredsSpec } from '../genAtom.js';
import { isOpenaiReasoningModel, type BrainModelEntry } from '../models.js';
import type { AtomMiddleware } from '../middleware/wrapAtomCall.js';
import { genOpenaiCompatibleAtom } from '../openai-compatible/genOpenaiCompatibleAtom.js';
import type { OpenaiWire } from '../openai-compatible/toOpenaiRequest.js';

/** .what = where an openai atom calls and whose key it takes: OpenAI's API by default, a gateway or proxy by URL */
const OPENAI_CREDS: AtomCredsSpec = {
  ...getSupplierFacts('openai'),
  // OpenAI's own API needs a key; a local proxy or gateway at another url may run without one
  needsKey: (url) => url.includes('api.openai.com'),
  urlSuffixes: /\/chat\/completions$/,
  callPath: '/chat/completions',
  urlHint: "OpenAI's base URL ends in /v1 (https://api.openai.com/v1); a gateway's usually does too",
};

/** .what = the tokens a reasoning model reasons in at the API's default effort (medium): the top of medium's budgets */
const DEFAULT_REASONING_TOKENS = 16_384;

/** .what = the largest budget each reasoning_effort stands for: up to 4k tokens low, up to 16k medium, above that high */
const EFFORT_BY_BUDGET: ReadonlyArray<{ upTo: number; effort: 'low' | 'medium' | 'high' }> = [
  { upTo: 4_096, effort: 'low' },
  { upTo: DEFAULT_REASONING_TOKENS, effort: 'medium' },
  { upTo: Infinity, effort: 'high' },
];

/**
 * .what = the reasoning_effort a thinking option stands for on one model, or null when nothing is sent
 * .why = OpenAI's reasoning models take an effort, never a budget; off is the least a model has (gpt-5: minimal,
 *        gpt-5.1 and later: none), and a model that cannot do what was asked fails before any request, never silently:
 *        an o-series model always reasons, a non-reasoning model takes no budget
 */
export const toReasoningEffort = (input: { model: string; thinking: BrainThinking }): string | null => {
  const { model, thinking } = input;
  if (!isOpenaiReasoningModel(model)) {
    if (thinking === 'off') return null;
    throw new BadRequestError(
      `--thinking ${thinking.budgetTokens}: ${model} is not a reasoning model, so it takes no thinking budget. Give --thinking off or omit it, or pick a reasoning model (openai/gpt-5, openai/o4-mini)`,
    );
  }
  if (thinking !== 'off') return EFFORT_BY_BUDGET.find((each) => thinking.budgetTokens <= each.upTo)!.effort;
  if (/^o\d/.test(model))
    throw new BadRequestError(
      `--thinking off: ${model} always reasons (its least is reasoning_effort low). Give a budget (up to 4096 is low) or omit --thinking, or pick a model that can answer without reasoning (openai/gpt-5, openai/gpt-4.1)`,
    );
  // gpt-5's least effort is minimal; gpt-5.1 and later answer without reasoning at none
  return /^gpt-5(-|$)/.test(model) ? 'minimal' : 'none';
};

/**
 * .what = a thinking option as OpenAI's reasoning_effort field, and room in the output bound for the reasoning
 * .why = sent only when a thinking option is given; the option is taken out of the request, so nothing else maps it.
 *        OpenAI counts a reasoning model's reasoning within max_completion_tokens: the answer's bound gets the budget on
 *        top (the default effort's when none is given, none when off), within the model's own most, as claude's thinking
 */
export const openaiReasoningMiddleware = (entry: BrainModelEntry): AtomMiddleware => ({
  name: "OpenAI's reasoning_effort",
  transformInput: (input) => {
    const { thinking } = input.request;
    const reasoningTokens =
      !isOpenaiReasoningModel(entry.model) || thinking === 'off' ? 0 : (thinking?.budgetTokens ?? DEFAULT_REASONING_TOKENS);
    const maxOutputTokens = Math.min(input.maxOutputTokens + reasoningTokens, entry.maxOutputTokens);
    if (!thinking) return { ...input, maxOutputTokens };
    const effort = toReasoningEffort({ model: entry.model, thinking });
    return {
      ...input,
      maxOutputTokens,
      request: { ...input.request, thinking: undefined },
      ...(effort ? { extraBody: { ...input.extraBody, reasoning_effort: effort } } : {}),
    };
  },
});

/**
 * .what = the openai atom: the OpenAI-compatible provider with OpenAI's credentials and what its API does its own way
 * .why = the third supplier, beside anthropic and qwen; a GPT model called through qwen/<model> was misnamed, unpriced, and sent
 *        max_tokens, which OpenAI's reasoning models refuse
 * .note = every model gets max_completion_tokens (max_tokens is deprecated on OpenAI's API); a reasoning model gets its
 *         system prompt as a developer message, as OpenAI's reasoning guide asks. Refusals (delta.refusal), length, usage
 *         with cached and reasoning tokens, and retries are the shared provider's
 */
export const genOpenaiAtom = (input: {
  slug: string;
  entry: BrainModelEntry;
  baseUrl?: string;
  description?: string;
  thinking?: BrainThinking;
}): BrainAtom => {
  const { model } = input.entry;
  // a thinking option the model cannot take fails when the atom is made, before a run starts
  checkThinking({ thinking: input.thinking, supplier: 'openai' });
  if (input.thinking) toReasoningEffort({ model, thinking: input.thinking });
  const wire: OpenaiWire = {
    maxTokensField: 'max_completion_tokens',
    systemRole: isOpenaiReasoningModel(model) ? 'developer' : 'system',
  };
  return genOpenaiCompatibleAtom({
    slug: input.slug,
    entry: input.entry,
    description: input.description ?? `OpenAI ${model} via the Chat Completions API`,
    creds: OPENAI_CREDS,
    middleware: [openaiReasoningMiddleware(input.entry)],
    baseUrl: input.baseUrl,
    thinking: input.thinking,
    wire,
  });
};

import type { BrainAtom, BrainThinking } from '../../core/contract/BrainAtom.js';
import { getSupplierFacts } from '../../core/contract/supplierTable.js';
import type { AtomCredsSpec } from '../genAtom.js';
import type { BrainModelEntry } from '../models.js';
import { textToolCallsMiddleware } from '../middleware/textToolCallsMiddleware.js';
import { thinkTagsMiddleware } from '../middleware/thinkTagsMiddleware.js';
import type { AtomMiddleware } from '../middleware/wrapAtomCall.js';
import { genOpenaiCompatibleAtom } from '../openai-compatible/genOpenaiCompatibleAtom.js';

/** .what = where a qwen atom calls and whose key it takes: DashScope by default, any OpenAI-compatible server by URL */
const QWEN_CREDS: AtomCredsSpec = {
  ...getSupplierFacts('qwen'),
  // DashScope needs a key; a self-hosted server at another url may run without one
  needsKey: (url) => url.includes('dashscope'),
  urlSuffixes: /\/chat\/completions$/,
  callPath: '/chat/completions',
  urlHint: 'an OpenAI-compatible base URL usually ends in /v1 (e.g. http://localhost:8000/v1)',
};

/**
 * .what = a thinking option as DashScope's own request fields: enable_thinking, and thinking_budget with a budget
 * .why = sent only when a thinking option is given, so a server that knows neither field sees nothing new; the option is
 *        taken out of the request, so no generic mapping of it is sent besides
 */
export const qwenThinkingMiddleware: AtomMiddleware = {
  name: "DashScope's enable_thinking and thinking_budget",
  transformInput: (input) => {
    const { thinking } = input.request;
    if (!thinking) return input;
    const fields = thinking === 'off' ? { enable_thinking: false } : { enable_thinking: true, thinking_budget: thinking.budgetTokens };
    return { ...input, request: { ...input.request, thinking: undefined }, extraBody: { ...input.extraBody, ...fields } };
  },
};

/**
 * .what = qwen's quirks, outermost first: calls written as text are read from the text that is left once the <think>
 *         block is out, and the thinking option becomes DashScope's fields
 */
export const QWEN_MIDDLEWARE: readonly AtomMiddleware[] = [textToolCallsMiddleware, thinkTagsMiddleware, qwenThinkingMiddleware];

/**
 * .what = the qwen atom: the OpenAI-compatible provider with qwen's credentials and quirks (DashScope by default)
 * .why = qwen's own API, which also serves vLLM, Ollama and llama.cpp servers by baseUrl or the supplier's URL variable, which
 *        may send thinking as <think> text and tool calls as text when run without a reasoning or tool parser
 * .note = a key is required for DashScope; a self-hosted server at another url may run without one. The base URL
 *         includes /v1 (the SDK appends /chat/completions); a pasted .../chat/completions is stripped
 */
export const genQwenAtom = (input: {
  slug: string;
  entry: BrainModelEntry;
  baseUrl?: string;
  description?: string;
  thinking?: BrainThinking;
}): BrainAtom =>
  genOpenaiCompatibleAtom({
    slug: input.slug,
    entry: input.entry,
    description: input.description ?? `Qwen ${input.entry.model} via an OpenAI-compatible Chat Completions endpoint`,
    creds: QWEN_CREDS,
    middleware: QWEN_MIDDLEWARE,
    baseUrl: input.baseUrl,
    thinking: input.thinking,
  });

import type { BrainAtomSpec } from '../core/contract/BrainAtom.js';

/** .what = a model bhrain knows: its id, window, output budget and price (an atom's spec, before the atom exists) */
export type BrainModelEntry = BrainAtomSpec;

/**
 * .what = the claude models behind the slugs, with list prices in USD per million tokens
 * .note = prices as published by Anthropic for these models (cache write = 1.25x input for 5 min ttl, cache read = 0.1x input)
 */
export const CLAUDE_MODELS: Record<'haiku' | 'sonnet' | 'opus', BrainModelEntry> = {
  haiku: {
    supplier: 'anthropic',
    model: 'claude-haiku-4-5',
    contextWindowTokens: 200_000,
    maxOutputTokens: 64_000,
    price: { input: 1, output: 5, cacheGet: 0.1, cacheSet: 1.25 },
  },
  sonnet: {
    supplier: 'anthropic',
    model: 'claude-sonnet-4-6',
    contextWindowTokens: 200_000,
    maxOutputTokens: 64_000,
    price: { input: 3, output: 15, cacheGet: 0.3, cacheSet: 3.75 },
  },
  opus: {
    supplier: 'anthropic',
    model: 'claude-opus-4-6',
    contextWindowTokens: 200_000,
    maxOutputTokens: 32_000,
    price: { input: 5, output: 25, cacheGet: 0.5, cacheSet: 6.25 },
  },
};

/** the model behind the bare `claude` slug */
export const CLAUDE_DEFAULT = 'sonnet' as const;

/**
 * .what = window and budget assumed for a claude model id outside the table (a dated id, a newer model, a gateway's alias)
 * .note = every Claude model since Claude 2.1 has a window of at least 200k tokens; 8k of output per call is the default
 *         budget anyway, and fits every current model
 */
export const CLAUDE_UNKNOWN_MODEL = { contextWindowTokens: 200_000, maxOutputTokens: 8_192 };

/**
 * .what = qwen models on DashScope's compatible mode, with international list prices in USD per million tokens
 * .note = any other `qwen/<model>` is allowed (vLLM, Ollama, llama.cpp servers) with an unknown price and QWEN_UNKNOWN_MODEL's window
 */
export const QWEN_MODELS: Record<string, BrainModelEntry> = {
  'qwen3-coder-plus': {
    supplier: 'qwen',
    model: 'qwen3-coder-plus',
    contextWindowTokens: 1_000_000,
    maxOutputTokens: 65_536,
    price: { input: 1, output: 5, cacheGet: 0.1, cacheSet: 0 },
  },
  'qwen3-coder-flash': {
    supplier: 'qwen',
    model: 'qwen3-coder-flash',
    contextWindowTokens: 1_000_000,
    maxOutputTokens: 65_536,
    price: { input: 0.3, output: 1.5, cacheGet: 0.03, cacheSet: 0 },
  },
  'qwen-plus': {
    supplier: 'qwen',
    model: 'qwen-plus',
    contextWindowTokens: 131_072,
    maxOutputTokens: 16_384,
    price: { input: 0.4, output: 1.2, cacheGet: 0.08, cacheSet: 0 },
  },
  'qwen-max': {
    supplier: 'qwen',
    model: 'qwen-max',
    contextWindowTokens: 32_768,
    maxOutputTokens: 8_192,
    price: { input: 1.6, output: 6.4, cacheGet: 0.32, cacheSet: 0 },
  },
  'qwen-turbo': {
    supplier: 'qwen',
    model: 'qwen-turbo',
    contextWindowTokens: 1_000_000,
    maxOutputTokens: 16_384,
    price: { input: 0.05, output: 0.2, cacheGet: 0.01, cacheSet: 0 },
  },
};

/** the model behind the bare `qwen` slug */
export const QWEN_DEFAULT = 'qwen3-coder-plus';

/** window and budget assumed for a qwen model outside the table (a self-hosted server) */
export const QWEN_UNKNOWN_MODEL = { contextWindowTokens: 32_768, maxOutputTokens: 8_192 };

/** .what = one openai model of the table: window, output budget and standard-tier list price (cache writes are free) */
const openaiModel = (
  model: string,
  window: { context: number; output: number },
  price: { input: number; cacheGet: number; output: number },
): BrainModelEntry => ({
  supplier: 'openai',
  model,
  contextWindowTokens: window.context,
  maxOutputTokens: window.output,
  price: { input: price.input, output: price.output, cacheGet: price.cacheGet, cacheSet: 0 },
});

const GPT5_WINDOW = { context: 400_000, output: 128_000 };
const GPT41_WINDOW = { context: 1_047_576, output: 32_768 };
const GPT4O_WINDOW = { context: 128_000, output: 16_384 };
const O_WINDOW = { context: 200_000, output: 100_000 };

/**
 * .what = openai models on OpenAI's Chat Completions API, with standard-tier list prices in USD per million tokens
 * .note = OpenAI's standard-tier list prices (developers.openai.com/api/docs/pricing): input, cached input (cacheGet),
 *         output; OpenAI bills no cache writes (cacheSet 0). Checked 2026-11-26: gpt-5 and gpt-5-nano against OpenAI's
 *         own model pages (developers.openai.com/api/docs/models/gpt-5-codex's comparison, …/gpt-5-nano); the others
 *         against tables that restate that page (deploybase.ai "OpenAI API Pricing 2026", March 2026; the openai-cost
 *         crate's table, 2026-Q2; Roo-Code's o4-mini entry; litellm's gpt-4.1 entry). Newer models (gpt-5.4 and later)
 *         are left out until their prices and windows are checked: any other `openai/<model>` is allowed, priced null
 *         with OPENAI_UNKNOWN_MODEL's window
 */
export const OPENAI_MODELS: Record<string, BrainModelEntry> = {
  'gpt-5': openaiModel('gpt-5', GPT5_WINDOW, { input: 1.25, cacheGet: 0.125, output: 10 }),
  'gpt-5-mini': openaiModel('gpt-5-mini', GPT5_WINDOW, { input: 0.25, cacheGet: 0.025, output: 2 }),
  'gpt-5-nano': openaiModel('gpt-5-nano', GPT5_WINDOW, { input: 0.05, cacheGet: 0.005, output: 0.4 }),
  'gpt-5.1': openaiModel('gpt-5.1', GPT5_WINDOW, { input: 1.25, cacheGet: 0.125, output: 10 }),
  'gpt-4.1': openaiModel('gpt-4.1', GPT41_WINDOW, { input: 2, cacheGet: 0.5, output: 8 }),
  'gpt-4.1-mini': openaiModel('gpt-4.1-mini', GPT41_WINDOW, { input: 0.4, cacheGet: 0.1, output: 1.6 }),
  'gpt-4.1-nano': openaiModel('gpt-4.1-nano', GPT41_WINDOW, { input: 0.1, cacheGet: 0.025, output: 0.4 }),
  'gpt-4o': openaiModel('gpt-4o', GPT4O_WINDOW, { input: 2.5, cacheGet: 1.25, output: 10 }),
  'gpt-4o-mini': openaiModel('gpt-4o-mini', GPT4O_WINDOW, { input: 0.15, cacheGet: 0.075, output: 0.6 }),
  o3: openaiModel('o3', O_WINDOW, { input: 2, cacheGet: 0.5, output: 8 }),
  'o3-mini': openaiModel('o3-mini', O_WINDOW, { input: 1.1, cacheGet: 0.55, output: 4.4 }),
  'o4-mini': openaiModel('o4-mini', O_WINDOW, { input: 1.1, cacheGet: 0.275, output: 4.4 }),
};

/** the model behind the bare `openai` slug */
export const OPENAI_DEFAULT = 'gpt-5';

/** window and budget assumed for an openai model outside the table (a newer model, a dated id) */
export const OPENAI_UNKNOWN_MODEL = { contextWindowTokens: 128_000, maxOutputTokens: 16_384 };

/**
 * .what = whether an openai model id is a reasoning model (the o-series, the gpt-5 family but its -chat variants)
 * .why = those take max_completion_tokens and reasoning_effort, and the system prompt in the developer role; dated ids
 *        (o3-2025-04-16) and models newer than the table follow their family
 */
export const isOpenaiReasoningModel = (model: string): boolean => /^(o\d|gpt-5)/.test(model) && !/-chat/.test(model);

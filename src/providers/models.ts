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

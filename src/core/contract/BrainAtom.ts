import type { z } from 'zod';

import type { BrainContext } from './BrainContext.js';
import type { BrainEpisode } from './BrainEpisode.js';
import type { BrainAssistantMessage, BrainMessage, BrainToolDefinition } from './BrainMessage.js';
import type { BrainCash, BrainOutput, BrainTokens } from './BrainOutput.js';

/** .what = which wire protocol a supplier speaks */
export type BrainSupplier = 'anthropic' | 'qwen' | 'openai';

/** .what = USD per million tokens, by part */
export interface BrainModelPrice {
  input: number;
  output: number;
  cacheGet: number;
  cacheSet: number;
}

/** .what = what the supplier guarantees for this atom: model, window, price */
export interface BrainAtomSpec {
  /** rhachet: a rhachet brain atom's, whatever wire it speaks (genBrainAtomOfRhachet) */
  supplier: BrainSupplier | 'rhachet';
  model: string;
  contextWindowTokens: number;
  maxOutputTokens: number;
  /** null when the model is not in the price table (self-hosted or unknown) */
  price: BrainModelPrice | null;
  /** whether the supplier can continue from a prior episode; one that cannot fails fast on `on` */
  continuation?: boolean;
}

/** .what = input of one inference call in the normalized message model */
export interface BrainAtomGenerateInput {
  system?: string;
  messages: readonly BrainMessage[];
  tools?: readonly BrainToolDefinition[];
  maxOutputTokens?: number;
  /** extended thinking: a token budget for the model to reason in before it answers, or 'off'; beats the atom's own */
  thinking?: BrainThinking;
  /** streamed reasoning text as it arrives (never part of the answer text) */
  onReasoningDelta?: (text: string) => void;
  /** streamed text as it arrives, for progress display */
  onTextDelta?: (text: string) => void;
  /** the text streamed so far is void (its attempt failed and is retried): discard it */
  onTextReset?: () => void;
  /** an attempt failed and is retried after delayMs (after onTextReset); for progress and events */
  onRetry?: (retry: { attempt: number; delayMs: number; reason: string }) => void;
}

/**
 * .what = whether the model reasons before it answers: a budget of thinking tokens, or 'off'
 * .note = claude: extended thinking (budget at least 1024 tokens, counted within the output tokens); qwen: DashScope's
 *         enable_thinking / thinking_budget (a server that reasons by its own setting ignores it); openai: reasoning_effort
 *         of a reasoning model (o-series, gpt-5), the budget mapped to low / medium / high
 */
export type BrainThinking = { budgetTokens: number } | 'off';

/**
 * .what = why a generation stopped, mapped truly from the supplier's stop reason
 * .note = end: a finished answer; tool_calls: calls to run; max_tokens: the output-token limit cut the answer or a call;
 *         refusal: the model declined (anthropic stop_reason refusal, openai refusal / content_filter), never retried;
 *         pause_turn: anthropic paused a long turn, continued by sending the assistant content back
 */
export type BrainStopReason = 'end' | 'tool_calls' | 'max_tokens' | 'refusal' | 'pause_turn';

/** .what = a tool call the output-token limit cut off mid-arguments: its name and how much of its arguments arrived */
export interface BrainTruncatedToolCall {
  id: string;
  name: string;
  receivedChars: number;
}

/** .what = output of one inference call: the assistant message, why it stopped, usage and cost */
export interface BrainAtomGeneration {
  message: BrainAssistantMessage;
  stopReason: BrainStopReason;
  /** calls cut off by the output-token limit (stopReason max_tokens): reported, never run, never in message.toolCalls */
  truncatedToolCalls?: BrainTruncatedToolCall[];
  /** the reasoning text of this turn (also on message.reasoning), absent when the model sent none */
  reasoning?: string;
  /** output tokens include the reasoning tokens: suppliers bill thinking as output */
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  /** supplier attempts this call took (1 = no retry) */
  attempts: number;
}

/**
 * .what = an LLM inference endpoint: one call in, one answer out
 * .why = the loop builds on generate() (native tool protocol); callers use ask() (episodes, structured output)
 */
export interface BrainAtom {
  readonly repo: 'bhrain';
  /** e.g. 'claude/sonnet', 'qwen/qwen3-coder-plus' */
  readonly slug: string;
  readonly description: string;
  readonly spec: BrainAtomSpec;

  /** one inference call with native tool calls; retries transient failures within bounds */
  generate(input: BrainAtomGenerateInput, context?: BrainContext): Promise<BrainAtomGeneration>;

  /** one question, optionally continuing an episode; returns a NEW episode */
  ask<TOutput = string>(
    input: {
      say: string;
      on?: { episode: BrainEpisode };
      schema?: { output: z.ZodType<TOutput> };
      system?: string;
    },
    context?: BrainContext,
  ): Promise<BrainOutput<TOutput, null>>;
}

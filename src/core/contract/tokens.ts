import type { BrainCash, BrainTokens } from './BrainOutput.js';
import type { BrainMessage } from './BrainMessage.js';

/** .what = zero tokens, a fresh accumulator */
export const emptyTokens = (): BrainTokens => ({ input: 0, output: 0, cache: { get: 0, set: 0 } });

/** .what = the sum of two token counts */
export const addTokens = (a: BrainTokens, b: BrainTokens): BrainTokens => ({
  input: a.input + b.input,
  output: a.output + b.output,
  cache: { get: a.cache.get + b.cache.get, set: a.cache.set + b.cache.set },
  // kept only when either side reported some, so a supplier that never does sees no new field
  ...(a.reasoning || b.reasoning ? { reasoning: (a.reasoning ?? 0) + (b.reasoning ?? 0) } : {}),
});

/** .what = the sum of two costs; unknown (null) when either is unknown, so a partial price is never shown as total */
export const addCash = (a: BrainCash | null, b: BrainCash | null): BrainCash | null => {
  if (!a || !b) return null;
  const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
  return {
    currency: 'USD',
    total: round(a.total + b.total),
    deets: {
      input: round(a.deets.input + b.deets.input),
      output: round(a.deets.output + b.deets.output),
      cache: { get: round(a.deets.cache.get + b.deets.cache.get), set: round(a.deets.cache.set + b.deets.cache.set) },
    },
  };
};

/** .what = the characters one token stands for, on average, in the quick estimate */
export const CHARS_PER_TOKEN = 4;

/**
 * .what = the one quick token estimate: about 4 characters per token
 * .why = a size is needed before a supplier has counted anything (the first request, new tool results, compaction
 *        targets, an episode about to be continued); one rule everywhere, so every layer's sizes agree
 */
export const estimateTokens = (text: string): number => estimateTokensOfChars(text.length);

/** .what = the same estimate over a count of characters (texts measured without joining them) */
export const estimateTokensOfChars = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** .what = the characters that fit in a number of tokens, by the same estimate */
export const charsOfTokens = (tokens: number): number => tokens * CHARS_PER_TOKEN;

/** .what = the estimated tokens of messages as they would be sent: text, tool-call arguments, and a little per message */
export const estimateMessagesTokens = (messages: readonly BrainMessage[]): number =>
  messages.reduce(
    (sum, message) =>
      sum +
      estimateTokens(message.content) +
      (message.role === 'assistant'
        ? message.toolCalls.reduce((calls, call) => calls + estimateTokens(JSON.stringify(call.input)) + 8, 0)
        : 0) +
      4,
    0,
  );

import type { BrainMessage } from '../../core/contract/BrainMessage.js';

/**
 * .what = a quick token estimate: about 4 characters per token
 * .why = the loop needs a size before it has a supplier's count (new tool results, the first request, compaction targets)
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/** .what = the estimated tokens of messages as they would be sent */
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

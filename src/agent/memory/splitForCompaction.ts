import type { BrainMessage } from '../../core/contract/BrainMessage.js';

/** .what = a conversation cut into what may be compacted and what must stay verbatim */
export interface CompactionSplit {
  /** everything before the latest user request (earlier exchanges) */
  earlier: BrainMessage[];
  /** the latest user request: always kept verbatim */
  request: BrainMessage | null;
  /** the work after the request, except the recent tail */
  middle: BrainMessage[];
  /** the last iterations after the request (each an assistant message with its tool results), kept whole */
  recent: BrainMessage[];
}

/**
 * .what = splits messages at the latest user request and at iteration boundaries
 * .why = compaction must never separate a tool call from its result, nor touch the request the model is working on
 */
export const splitForCompaction = (messages: readonly BrainMessage[], keepRecentIterations: number): CompactionSplit => {
  const requestIndex = messages.map((message) => message.role).lastIndexOf('user');
  const work = messages.slice(requestIndex + 1);
  const iterationStarts = work.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
  const cut = iterationStarts.length > keepRecentIterations ? iterationStarts[iterationStarts.length - keepRecentIterations] : 0;
  return {
    earlier: messages.slice(0, Math.max(0, requestIndex)),
    request: requestIndex >= 0 ? messages[requestIndex] : null,
    middle: keepRecentIterations === 0 ? work : work.slice(0, cut),
    recent: keepRecentIterations === 0 ? [] : work.slice(cut),
  };
};

/** .what = a tool result cut to its head and tail, saying how much was condensed */
export const condenseToolResult = (message: BrainMessage, maxChars: number): BrainMessage => {
  if (message.role !== 'tool' || message.content.length <= maxChars) return message;
  const head = message.content.slice(0, Math.floor(maxChars * 0.6));
  const tail = message.content.slice(-Math.floor(maxChars * 0.4));
  return {
    ...message,
    content: `${head}\n[… condensed: ${message.content.length - head.length - tail.length} of ${message.content.length} characters removed to save context; run the tool again for the full output …]\n${tail}`,
  };
};

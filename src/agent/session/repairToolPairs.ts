import type { BrainMessage } from '../../core/contract/BrainMessage.js';

/**
 * .what = makes every tool call answered and every tool result answer a call, in place of the missing pieces
 * .why = both protocols reject a call without a result; an interrupted or compacted history must still be sendable
 */
export const repairToolPairs = (messages: readonly BrainMessage[]): BrainMessage[] => {
  const repaired: BrainMessage[] = [];
  const open = new Map<string, string>();
  const flushOpen = () => {
    for (const [toolCallId, toolName] of open)
      repaired.push({
        role: 'tool',
        toolCallId,
        toolName,
        isError: true,
        content: 'no result: this call was interrupted before it returned; run it again if you still need it',
      });
    open.clear();
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!open.delete(message.toolCallId)) continue; // a result whose call is gone (compacted away) is dropped
      repaired.push(message);
      continue;
    }
    flushOpen();
    repaired.push(message);
    if (message.role === 'assistant') for (const call of message.toolCalls) open.set(call.id, call.name);
  }
  flushOpen();
  return repaired;
};

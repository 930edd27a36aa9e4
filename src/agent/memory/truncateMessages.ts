import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { estimateMessagesTokens } from '../../core/contract/tokens.js';
import { splitForCompaction } from './splitForCompaction.js';

/** .what = messages grouped so a tool call never leaves its results: [user] or [assistant, ...its tool results] */
const groupTurns = (messages: readonly BrainMessage[]): BrainMessage[][] =>
  messages.reduce<BrainMessage[][]>((groups, message) => {
    if (message.role === 'tool' && groups.length) groups[groups.length - 1].push(message);
    else groups.push([message]);
    return groups;
  }, []);

/**
 * .what = drops the oldest turns until the messages fit limit tokens (BhrainMemory.truncate, docs/design/loop.md#memory), with no llm call;
 *         the latest user request and the newest iteration are always kept, a tool call never loses its results, and a
 *         notice says how many were dropped; the same list when nothing needs dropping
 */
export const truncateMessages = (input: { messages: readonly BrainMessage[]; limit: number }): readonly BrainMessage[] => {
  const split = splitForCompaction(input.messages, 1);
  const kept = [...(split.request ? [split.request] : []), ...split.recent];
  const older = groupTurns([...split.earlier, ...split.middle]);
  // keep the newest older turns that still fit, dropping from the oldest
  let used = estimateMessagesTokens(kept);
  let firstKept = older.length;
  while (firstKept > 0 && used + estimateMessagesTokens(older[firstKept - 1]) <= input.limit) {
    firstKept--;
    used += estimateMessagesTokens(older[firstKept]);
  }
  const dropped = older.slice(0, firstKept).flat().length;
  if (!dropped) return input.messages;
  const keptOlder = older.slice(firstKept).flat();
  const notice: BrainMessage = {
    role: 'user',
    content: `[context truncated: the ${dropped} oldest messages of this session were dropped to fit the context window]`,
  };
  return [
    notice,
    ...keptOlder.filter((message) => split.earlier.includes(message)),
    ...(split.request ? [split.request] : []),
    ...keptOlder.filter((message) => split.middle.includes(message)),
    ...split.recent,
  ];
};

import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { DEFAULT_COMPACT_AT_RATIO } from '../constants.js';
import { estimateMessagesTokens } from '../session/estimateTokens.js';
import type { BhrainMemoryManager } from './BhrainMemoryManager.js';
import { splitForCompaction } from './splitForCompaction.js';

/** .what = messages grouped so a tool call never leaves its results: [user] or [assistant, ...its tool results] */
const groupTurns = (messages: readonly BrainMessage[]): BrainMessage[][] =>
  messages.reduce<BrainMessage[][]>((groups, message) => {
    if (message.role === 'tool' && groups.length) groups[groups.length - 1].push(message);
    else groups.push([message]);
    return groups;
  }, []);

/**
 * .what = a memory manager that drops the oldest turns near the limit, with no LLM call
 * .why = fast, free compaction; the latest user request and the newest iteration are always kept
 */
export const genTruncate = (options: { compactAtRatio?: number; targetRatio?: number } = {}): BhrainMemoryManager => {
  const compactAtRatio = options.compactAtRatio ?? DEFAULT_COMPACT_AT_RATIO;
  const targetRatio = options.targetRatio ?? 0.5;
  return {
    name: 'truncate',
    shouldUpdate: (_, context) => context.contextTokens >= context.limitTokens * compactAtRatio,
    getUpdate: ({ messages }, context) => {
      const split = splitForCompaction(messages, 1);
      const budget = context.limitTokens * targetRatio - context.fixedTokens;
      const kept = [...(split.request ? [split.request] : []), ...split.recent];
      const older = groupTurns([...split.earlier, ...split.middle]);
      // keep the newest older turns that still fit, dropping from the oldest
      let used = estimateMessagesTokens(kept);
      let firstKept = older.length;
      while (firstKept > 0 && used + estimateMessagesTokens(older[firstKept - 1]) <= budget) {
        firstKept--;
        used += estimateMessagesTokens(older[firstKept]);
      }
      const dropped = older.slice(0, firstKept).flat().length;
      if (!dropped) return { shouldUpdate: false };
      const keptOlder = older.slice(firstKept).flat();
      const keptEarlier = keptOlder.filter((message) => split.earlier.includes(message));
      const keptMiddle = keptOlder.filter((message) => split.middle.includes(message));
      const notice: BrainMessage = {
        role: 'user',
        content: `[context truncated: the ${dropped} oldest messages of this session were dropped to fit the context window]`,
      };
      return {
        shouldUpdate: true,
        newMessages: [notice, ...keptEarlier, ...(split.request ? [split.request] : []), ...keptMiddle, ...split.recent],
      };
    },
  };
};

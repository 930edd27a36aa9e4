import { DEFAULT_COMPACT_AT_RATIO } from '../constants.js';
import type { BhrainMemoryManager } from './BhrainMemoryManager.js';
import { truncateMessages } from './truncateMessages.js';

/**
 * .what = a memory manager that drops the oldest turns near the limit (BhrainMemory.truncate), with no LLM call
 * .why = fast, free compaction; the latest user request and the newest iteration are always kept
 */
export const genTruncate = (options: { compactAtRatio?: number; targetRatio?: number } = {}): BhrainMemoryManager => {
  const compactAtRatio = options.compactAtRatio ?? DEFAULT_COMPACT_AT_RATIO;
  const targetRatio = options.targetRatio ?? 0.5;
  return {
    name: 'truncate',
    shouldUpdate: (_, context) => context.contextTokens >= context.limitTokens * compactAtRatio,
    getUpdate: ({ messages }, context) => {
      const kept = truncateMessages({ messages, limit: context.limitTokens * targetRatio - context.fixedTokens });
      return kept === messages ? { shouldUpdate: false } : { shouldUpdate: true, newMessages: [...kept] };
    },
  };
};

import { DEFAULT_COMPACT_AT_RATIO, DEFAULT_CONDENSE_TOOL_RESULT_CHARS } from '../constants.js';
import type { BhrainMemoryManager } from './BhrainMemoryManager.js';
import { condenseToolResult, splitForCompaction } from './splitForCompaction.js';
import { summarizeMessages } from './summarizeMessages.js';

/**
 * .what = the default memory manager: near the context limit, earlier turns are summarized by the atom
 *         (BhrainMemory.summarize) and large tool results condensed; the latest user request and the recent iterations
 *         stay verbatim
 * .why = frees context while keeping the meaning the task depends on (the system prompt is never in messages)
 */
export const genSummarizeOnLimit = (
  options: { compactAtRatio?: number; keepRecentIterations?: number; condenseToolResultChars?: number } = {},
): BhrainMemoryManager => {
  const compactAtRatio = options.compactAtRatio ?? DEFAULT_COMPACT_AT_RATIO;
  const keepRecentIterations = options.keepRecentIterations ?? 2;
  const condenseChars = options.condenseToolResultChars ?? DEFAULT_CONDENSE_TOOL_RESULT_CHARS;
  return {
    name: 'summarize-on-limit',
    shouldUpdate: (_, context) => context.contextTokens >= context.limitTokens * compactAtRatio,
    getUpdate: async ({ messages }, context) => {
      const split = splitForCompaction(messages, keepRecentIterations);
      const toSummarize = [...split.earlier, ...split.middle].map((message) => condenseToolResult(message, condenseChars));
      if (!toSummarize.length) {
        // nothing older to summarize: condensing the recent tool results is all that can be done
        const condensed = messages.map((message) => condenseToolResult(message, condenseChars));
        const changed = condensed.some((message, index) => message !== messages[index]);
        return changed ? { shouldUpdate: true, newMessages: condensed } : { shouldUpdate: false };
      }
      const summary = await summarizeMessages({ messages: toSummarize }, context);
      context.log.info(`memory: summarized ${toSummarize.length} messages into ${summary.content.length} characters`);
      return {
        shouldUpdate: true,
        newMessages: [
          summary,
          ...(split.request ? [split.request] : []),
          ...split.recent.map((message) => condenseToolResult(message, condenseChars * 4)),
        ],
      };
    },
  };
};

import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { DEFAULT_COMPACT_AT_RATIO, DEFAULT_CONDENSE_TOOL_RESULT_CHARS } from '../constants.js';
import { asTranscriptText } from './asTranscriptText.js';
import type { BhrainMemoryManager } from './BhrainMemoryManager.js';
import { condenseToolResult, splitForCompaction } from './splitForCompaction.js';

const SUMMARIZER_SYSTEM = [
  'You compact the working memory of a coding agent. Summarize the transcript you are given so the agent can continue the task without it.',
  'Keep: the goal and every requirement, constraint and fact the user stated (names, numbers, paths, values, verbatim where short);',
  'decisions made and why; files read or changed and what matters in them; commands run and their outcomes; errors hit and how they were resolved; what remains to do.',
  'Drop: chit-chat and raw output that no longer matters. Write plain text, at most about 600 words.',
].join(' ');

/** .what = the summary text as it is placed before the latest request */
export const asSummaryMessage = (summary: string): BrainMessage => ({
  role: 'user',
  content: `[context summary: earlier turns of this session were compacted into this summary]\n${summary}`,
});

/**
 * .what = the default memory manager: near the context limit, earlier turns are summarized by the atom
 *         and large tool results condensed; the latest user request and the recent iterations stay verbatim
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
      const generation = await context.generate({
        system: SUMMARIZER_SYSTEM,
        messages: [{ role: 'user', content: `Transcript to summarize:\n\n${asTranscriptText(toSummarize)}` }],
      });
      const summary = generation.message.content.trim() || asTranscriptText(toSummarize).slice(0, condenseChars);
      context.log.info(`memory: summarized ${toSummarize.length} messages into ${summary.length} characters`);
      return {
        shouldUpdate: true,
        newMessages: [
          asSummaryMessage(summary),
          ...(split.request ? [split.request] : []),
          ...split.recent.map((message) => condenseToolResult(message, condenseChars * 4)),
        ],
      };
    },
  };
};

import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { BhrainCompactionResult, BhrainMemoryContext } from './BhrainMemoryManager.js';
import { externalizeContent } from './externalizeContent.js';
import { genSummarizeOnLimit } from './genSummarizeOnLimit.js';
import { genTruncate } from './genTruncate.js';
import { summarizeMessages } from './summarizeMessages.js';
import { truncateMessages } from './truncateMessages.js';

export type { BhrainMemoryExternalRef } from './externalizeContent.js';

/** .what = the builtin strategies compact can run, by the names their memory managers carry */
const STRATEGIES = { 'summarize-on-limit': genSummarizeOnLimit, truncate: genTruncate } as const;

/**
 * .what = compacts messages now by a builtin strategy (BhrainMemory.compact, docs/design/loop.md#memory): 'summarize-on-limit' (the llm
 *         summarizes earlier turns, large tool results are condensed) or 'truncate' (the oldest turns are dropped)
 * .why = the strategy's decision, whatever its shouldUpdate would say: for a manager of your own that compacts on its
 *        own terms
 */
export const compactMessages = async (
  input: { messages: readonly BrainMessage[]; strategy: string },
  context: BhrainMemoryContext,
): Promise<BhrainCompactionResult> => {
  const strategy = Object.hasOwn(STRATEGIES, input.strategy) ? STRATEGIES[input.strategy as keyof typeof STRATEGIES] : null;
  if (!strategy)
    throw new BadRequestError(`unknown compaction strategy '${input.strategy}': choose one of ${Object.keys(STRATEGIES).join(', ')}`);
  return strategy().getUpdate({ messages: input.messages }, context);
};

/** .what = the BhrainMemory operations (docs/design/loop.md#memory): compact, summarize, truncate, externalize */
export const BhrainMemory = {
  compact: compactMessages,
  summarize: summarizeMessages,
  truncate: truncateMessages,
  externalize: externalizeContent,
} as const;

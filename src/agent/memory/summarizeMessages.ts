import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { summarizeTranscript } from '../../core/continuation/summarizeTranscript.js';
import { asTranscriptText } from './asTranscriptText.js';
import type { BhrainMemoryContext } from './BhrainMemoryManager.js';

/** .what = a summary as it is placed in the context: a user message before the latest request, saying what it is */
export const asSummaryMessage = (summary: string): BrainMessage => ({
  role: 'user',
  content: `[context summary: earlier turns of this session were compacted into this summary]\n${summary}`,
});

/**
 * .what = condenses messages into one summary message, by the llm (BhrainMemory.summarize, docs/design/loop.md#memory), with the one
 *         summarizer the repl's recap uses too (summarizeTranscript: in parts when they exceed half the window)
 * .why = '' from the model falls back to the head of the transcript, so a summary never loses everything
 */
export const summarizeMessages = async (
  input: { messages: readonly BrainMessage[] },
  context: Pick<BhrainMemoryContext, 'generate' | 'limitTokens'>,
): Promise<BrainMessage> => {
  const parts = input.messages.map((message) => asTranscriptText([message]));
  const summary = await summarizeTranscript({ parts, windowTokens: context.limitTokens }, { generate: context.generate });
  return asSummaryMessage(summary || asTranscriptText(input.messages).slice(0, 2_000));
};

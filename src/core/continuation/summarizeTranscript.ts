import type { BrainAtomGenerateInput, BrainAtomGeneration } from '../contract/BrainAtom.js';
import { charsOfTokens } from '../contract/tokens.js';

/**
 * .what = the one summarizer prompt: for the loop's memory manager (a coding agent's working memory) and for the repl's
 *         recap (a conversation that continues in a fresh context window) alike
 */
export const SUMMARIZER_SYSTEM = [
  'You compact a conversation so it can continue in a fresh context window.',
  'You compact the working memory of a coding agent the same way: summarize the transcript you are given so the assistant can continue the task seamlessly without it.',
  'Keep: the goal and every instruction, requirement, constraint, name, number, path, value and fact the user gave (verbatim where short);',
  'decisions made and why; files read or changed and what matters in them; commands run and their outcomes; errors hit and how they were resolved; what remains open.',
  'Drop: chit-chat and raw output that no longer matters. Write plain text, at most about 600 words.',
].join(' ');

/** share of the window one summarization request may fill */
const SUMMARIZE_INPUT_RATIO = 0.5;

/** .what = a text cut to its head and tail when longer than maxChars, saying how much was cut */
const cutToFit = (text: string, maxChars: number): string =>
  text.length > maxChars
    ? `${text.slice(0, maxChars * 0.6)}\n[… ${text.length - maxChars} characters cut …]\n${text.slice(-maxChars * 0.4 + 40)}`
    : text;

/** .what = parts of a transcript grouped so each group fits the budget; an oversized part keeps its head and tail */
export const chunkTranscript = (parts: readonly string[], budgetChars: number): string[] => {
  const chunks: string[] = [];
  let current = '';
  for (const whole of parts) {
    const part = cutToFit(whole, budgetChars);
    if (current && current.length + part.length + 2 > budgetChars) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current}\n\n${part}` : part;
  }
  if (current) chunks.push(current);
  return chunks;
};

/**
 * .what = summarizes a transcript, given as its parts in order (an exchange, a message), into one text: the parts are
 *         grouped into requests that fit half the window, summarized at once, and their summaries merged the same way
 *         until one remains; '' when the model said nothing
 * .why = one summarizer for the memory manager and the repl's recap: a transcript larger than the window itself is
 *        summarized in parts, whoever asks
 */
export const summarizeTranscript = async (
  input: { parts: readonly string[]; windowTokens: number },
  context: { generate: (request: BrainAtomGenerateInput) => Promise<BrainAtomGeneration> },
): Promise<string> => {
  const budgetChars = charsOfTokens(input.windowTokens * SUMMARIZE_INPUT_RATIO);
  const summarize = async (chunk: string) =>
    (
      await context.generate({ system: SUMMARIZER_SYSTEM, messages: [{ role: 'user', content: `Transcript to summarize:\n\n${chunk}` }] })
    ).message.content.trim();
  let summaries = await Promise.all(chunkTranscript(input.parts, budgetChars).map(summarize));
  // each summary merged fits half a request, so every round at least halves them
  while (summaries.length > 1)
    summaries = await Promise.all(
      chunkTranscript(
        summaries.map((summary, index) => cutToFit(`part ${index + 1} of the transcript, summarized:\n${summary}`, budgetChars / 2 - 2)),
        budgetChars,
      ).map(summarize),
    );
  return summaries[0] ?? '';
};

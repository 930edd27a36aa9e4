import type { BrainAtom } from '../contract/BrainAtom.js';
import type { BrainContext } from '../contract/BrainContext.js';
import { genBrainEpisode, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange, type BrainExchange } from '../contract/BrainExchange.js';
import { asPlaintextExchange } from '../contract/asPlaintext.js';
import { RECAP_PREFIX } from '../contract/BrainSeries.js';

const RECAP_SYSTEM = [
  'You compact a conversation so it can continue in a fresh context window.',
  'Write a recap that lets the assistant continue seamlessly: the goal, every instruction, constraint, name, number and fact the user gave',
  '(verbatim where short), what was decided and done, and what remains open. Plain text, at most about 500 words.',
].join(' ');

/** share of the atom's window one summarization request may fill */
const SUMMARIZE_INPUT_RATIO = 0.5;

/** .what = exchanges as plaintext parts, grouped so each group fits the budget; an oversized part keeps its head and tail */
const chunkTranscript = (exchanges: readonly BrainExchange[], budgetChars: number): string[] => {
  const chunks: string[] = [];
  let current = '';
  exchanges.forEach((exchange, index) => {
    let part = asPlaintextExchange(exchange, index + 1);
    if (part.length > budgetChars)
      part = `${part.slice(0, budgetChars * 0.6)}\n[… ${part.length - budgetChars} characters cut …]\n${part.slice(-budgetChars * 0.4 + 40)}`;
    if (current && current.length + part.length + 2 > budgetChars) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current}\n\n${part}` : part;
  });
  if (current) chunks.push(current);
  return chunks;
};

/**
 * .what = when an episode (plus what is about to be added) would fill the window, summarizes it into a recap
 *         and returns the new episode that opens with it; null when the episode still fits
 * .why = a series outlives any one context window: compaction bridges episodes, transparently to the caller;
 *        an episode larger than the window itself is summarized in parts, then the parts' summaries together
 */
export const compactEpisode = async (input: {
  atom: BrainAtom;
  episode: BrainEpisode;
  pendingChars: number;
  compactAtTokens: number;
  /** the window the summarizer works within: the atom's, or a smaller configured one */
  windowTokens: number;
  context: BrainContext;
}): Promise<{ episode: BrainEpisode; summary: string } | null> => {
  const chars = input.episode.exchanges.reduce((sum, exchange) => sum + exchange.input.length + exchange.output.length, input.pendingChars);
  if (chars / 4 < input.compactAtTokens) return null;
  const budgetChars = input.windowTokens * SUMMARIZE_INPUT_RATIO * 4;
  const summarize = async (text: string) =>
    (
      await input.atom.generate({ system: RECAP_SYSTEM, messages: [{ role: 'user', content: text }] }, input.context)
    ).message.content.trim();
  let parts = await Promise.all(chunkTranscript(input.episode.exchanges, budgetChars).map(summarize));
  while (parts.length > 1) {
    // the parts' summaries are merged the same way, until one recap remains
    const merged = parts.map((part, index) => genBrainExchange({ input: `part ${index + 1} of the conversation`, output: part }));
    parts = await Promise.all(chunkTranscript(merged, budgetChars).map(summarize));
  }
  const summary = parts[0] ?? '';
  const recap = genBrainExchange({ input: `${RECAP_PREFIX}\n${summary}`, output: 'Understood: I will continue from this recap.' });
  return { summary, episode: genBrainEpisode({ exchanges: [recap] }) };
};

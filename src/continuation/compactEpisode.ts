import type { BrainAtom } from '../contract/BrainAtom.js';
import type { BrainContext } from '../contract/BrainContext.js';
import { genBrainEpisode, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import { asPlaintextEpisode } from '../contract/asPlaintext.js';

const RECAP_SYSTEM = [
  'You compact a conversation so it can continue in a fresh context window.',
  'Write a recap that lets the assistant continue seamlessly: the goal, every instruction, constraint, name, number and fact the user gave',
  '(verbatim where short), what was decided and done, and what remains open. Plain text, at most about 500 words.',
].join(' ');

/** .what = the first exchange of an episode that continues from a recap */
export const RECAP_PREFIX = '[recap: the earlier exchanges of this series were compacted into this summary]';

/**
 * .what = when an episode (plus what is about to be added) would fill the window, summarizes it into a recap
 *         and returns the new episode that opens with it; null when the episode still fits
 * .why = a series outlives any one context window: compaction bridges episodes, transparently to the caller
 */
export const compactEpisode = async (input: {
  atom: BrainAtom;
  episode: BrainEpisode;
  pendingChars: number;
  compactAtTokens: number;
  context: BrainContext;
}): Promise<{ episode: BrainEpisode; summary: string } | null> => {
  const chars = input.episode.exchanges.reduce((sum, exchange) => sum + exchange.input.length + exchange.output.length, input.pendingChars);
  if (chars / 4 < input.compactAtTokens) return null;
  const generation = await input.atom.generate(
    { system: RECAP_SYSTEM, messages: [{ role: 'user', content: asPlaintextEpisode(input.episode) }] },
    input.context,
  );
  const summary = generation.message.content.trim();
  const recap = genBrainExchange({ input: `${RECAP_PREFIX}\n${summary}`, output: 'Understood: I will continue from this recap.' });
  return { summary, episode: genBrainEpisode({ exchanges: [recap] }) };
};

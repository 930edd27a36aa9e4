import type { BrainAtom } from '../contract/BrainAtom.js';
import type { BrainContext } from '../contract/BrainContext.js';
import { genBrainEpisode, type BrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import { asPlaintextExchangeParts, asPlaintextSteps } from '../contract/asPlaintext.js';
import { RECAP_PREFIX } from '../contract/BrainSeries.js';
import { estimateTokensOfChars } from '../contract/tokens.js';
import { summarizeTranscript } from './summarizeTranscript.js';

/**
 * .what = when an episode (plus what is about to be added) would fill the window, summarizes it into a recap
 *         and returns the new episode that opens with it; null when the episode still fits
 * .why = a series outlives any one context window: compaction bridges episodes, transparently to the caller; the
 *        summary is the memory manager's summarizer (summarizeTranscript), which takes an episode larger than the window
 *        in parts; each exchange goes to it with its tool calls and results, call by call (asPlaintextExchangeParts)
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
  // an exchange fills the window with its tool calls and results too, as asPriorTurns renders them
  const chars = input.episode.exchanges.reduce(
    (sum, exchange) =>
      sum + exchange.input.length + exchange.output.length + (exchange.steps?.length ? asPlaintextSteps(exchange.steps).length : 0),
    input.pendingChars,
  );
  if (estimateTokensOfChars(chars) < input.compactAtTokens) return null;
  const summary = await summarizeTranscript(
    {
      // call by call: a turn larger than a summarizer's request is taken in parts, never cut in its middle
      parts: input.episode.exchanges.flatMap((exchange, index) => asPlaintextExchangeParts(exchange, index + 1)),
      windowTokens: input.windowTokens,
    },
    { generate: (request) => input.atom.generate(request, input.context) },
  );
  const recap = genBrainExchange({ input: `${RECAP_PREFIX}\n${summary}`, output: 'Understood: I will continue from this recap.' });
  return { summary, episode: genBrainEpisode({ exchanges: [recap] }) };
};

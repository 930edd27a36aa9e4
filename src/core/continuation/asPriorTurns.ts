import type { BrainEpisode } from '../contract/BrainEpisode.js';
import type { BrainExchange } from '../contract/BrainExchange.js';
import type { BrainMessage } from '../contract/BrainMessage.js';
import { asPlaintextSteps } from '../contract/asPlaintext.js';

/** .what = what opens the record of an earlier turn's tool calls in the assistant's turn */
export const PRIOR_TOOL_CALLS_HEADER = '[tool calls I made for this request, in order, with their results as I read them then]';

/** .what = what closes that record, before the answer */
export const PRIOR_TOOL_CALLS_FOOTER = '[end of those tool calls; the answer I gave follows]';

/**
 * .what = what the assistant said in an earlier exchange: its tool calls and their results as text, then its answer
 * .why = text, whichever supplier made the exchange and whichever reads it: a native replay would need the supplier's
 *        call ids, its signed reasoning blocks (anthropic refuses tool turns without them) and the same tools offered
 *        again (ask offers fewer than act), none of which an exchange keeps; one rendering is one path to trust
 */
const asPriorAnswer = (exchange: BrainExchange): string =>
  exchange.steps?.length
    ? [PRIOR_TOOL_CALLS_HEADER, asPlaintextSteps(exchange.steps), PRIOR_TOOL_CALLS_FOOTER, exchange.output].join('\n')
    : exchange.output;

/** .what = prior exchanges as plain user/assistant turns, tool calls included as text: any supplier reads them, whoever produced them */
export const asPriorTurns = (episode: BrainEpisode | null | undefined): BrainMessage[] =>
  (episode?.exchanges ?? []).flatMap((exchange): BrainMessage[] => [
    { role: 'user', content: exchange.input },
    { role: 'assistant', content: asPriorAnswer(exchange), toolCalls: [] },
  ]);

import type { BrainEpisode } from './BrainEpisode.js';
import type { BrainExchange, BrainExchangeStep } from './BrainExchange.js';
import type { BrainSeries } from './BrainSeries.js';

// supplier-agnostic plaintext renderings of exchanges, episodes and series: any supplier can read prior context as
// text, so a checkpoint can move between suppliers without translation

/**
 * .what = the parts of a turn's steps as text, in order: what the model said with its calls, then one block per call
 *         (its tool and input JSON on one line, its result as the model read it below), numbered across the turn
 * .why = a summarizer takes a long turn call by call (summarizeTranscript groups parts to fit), never cut in its middle
 */
export const asPlaintextStepParts = (steps: readonly BrainExchangeStep[]): string[] => {
  let number = 0;
  return steps.flatMap((step) => [
    ...(step.said.trim() ? [step.said.trim()] : []),
    ...step.calls.map((call) => {
      number++;
      return [
        `[tool call ${number}] ${call.name} ${JSON.stringify(call.input)}`,
        `[result of tool call ${number}${call.isError ? ': error' : ''}]`,
        call.result,
      ].join('\n');
    }),
  ]);
};

/**
 * .what = the steps of a turn as one text (asPlaintextStepParts, joined)
 * .why = a continuation on any supplier reads the earlier tool calls as text (asPriorTurns), so every supplier gets the
 *        same transcript, whichever made it; bracketed labels are no supplier's tool-call syntax, so no model reads
 *        them as a call to make
 */
export const asPlaintextSteps = (steps: readonly BrainExchangeStep[]): string => asPlaintextStepParts(steps).join('\n');

/**
 * .what = an exchange as the parts of a transcript: without tool calls one part, as it always was; with them, its input,
 *         each of its tool calls, then its output
 */
export const asPlaintextExchangeParts = (exchange: BrainExchange, index = 1): string[] => {
  const opening = [`### exchange ${index}`, '#### input', exchange.input].join('\n');
  const closing = ['#### output', exchange.output].join('\n');
  if (!exchange.steps?.length) return [`${opening}\n${closing}`];
  return [`${opening}\n#### tool calls`, ...asPlaintextStepParts(exchange.steps), closing];
};

/** .what = an exchange as plaintext: its input, its tool calls and their results, its output */
export const asPlaintextExchange = (exchange: BrainExchange, index = 1): string => asPlaintextExchangeParts(exchange, index).join('\n');

/** .what = an episode as plaintext: its exchanges in order */
export const asPlaintextEpisode = (episode: BrainEpisode): string =>
  [
    `## episode ${episode.hash.slice(0, 12)} (${episode.exchanges.length} exchanges)`,
    ...episode.exchanges.map((exchange, index) => asPlaintextExchange(exchange, index + 1)),
  ].join('\n\n');

/** .what = a series as plaintext: its episodes in order, each compaction summary between the episodes it bridges */
export const asPlaintextSeries = (series: BrainSeries): string =>
  [
    `# series ${series.hash.slice(0, 12)} (${series.episodes.length} episodes)`,
    ...series.episodes.flatMap((episode, index) => [
      ...(index > 0 ? [`## compaction summary ${index}\n${series.summaries[index - 1]}`] : []),
      asPlaintextEpisode(episode),
    ]),
  ].join('\n\n');

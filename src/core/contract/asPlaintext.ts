import type { BrainEpisode } from './BrainEpisode.js';
import type { BrainExchange } from './BrainExchange.js';
import type { BrainSeries } from './BrainSeries.js';

/**
 * .what = supplier-agnostic plaintext renderings of exchanges, episodes and series
 * .why = any supplier can read prior context as text, so a checkpoint can move between suppliers without translation
 */
export const asPlaintextExchange = (exchange: BrainExchange, index = 1): string =>
  [`### exchange ${index}`, '#### input', exchange.input, '#### output', exchange.output].join('\n');

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

import type { BrainEpisode } from '../contract/BrainEpisode.js';
import type { BrainMessage } from '../contract/BrainMessage.js';

/** .what = prior exchanges as plain user/assistant turns: any supplier reads them, whoever produced them */
export const asPriorTurns = (episode: BrainEpisode | null | undefined): BrainMessage[] =>
  (episode?.exchanges ?? []).flatMap((exchange): BrainMessage[] => [
    { role: 'user', content: exchange.input },
    { role: 'assistant', content: exchange.output, toolCalls: [] },
  ]);

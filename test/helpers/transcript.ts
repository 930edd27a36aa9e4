import type { BrainMessage, BrainToolMessage } from '../../src/core/contract/BrainMessage.js';

/** .what = the tool messages of a transcript, or of a session result's transcript, in order */
export const toolResults = (from: readonly { role: string }[] | { transcript: readonly BrainMessage[] }): BrainToolMessage[] =>
  ('transcript' in from ? from.transcript : (from as readonly BrainMessage[])).filter(
    (message): message is BrainToolMessage => message.role === 'tool',
  );

/** .what = what the model read back from each tool call of a transcript or session result, in order */
export const toolResultTexts = (from: readonly { role: string }[] | { transcript: readonly BrainMessage[] }): string[] =>
  toolResults(from).map((message) => message.content);

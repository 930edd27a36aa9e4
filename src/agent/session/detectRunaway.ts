import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { RUNAWAY_REPEAT_COUNT } from '../constants.js';

/**
 * .what = tracks consecutive identical tool calls (same tool, same arguments) across iterations
 * .why = a model stuck calling the same thing learns so from the result, instead of burning iterations
 */
export const genRunawayDetector = () => {
  let lastSignature: string | null = null;
  let repeats = 0;
  return {
    /** the notice to append to this call's result, or null when it is not a runaway */
    observe: (call: BrainToolCall): string | null => {
      const signature = `${call.name}\n${JSON.stringify(call.input)}`;
      repeats = signature === lastSignature ? repeats + 1 : 1;
      lastSignature = signature;
      return repeats >= RUNAWAY_REPEAT_COUNT
        ? `[bhrain: this is call ${repeats} in a row to ${call.name} with the same arguments; its result will not change. Change your approach or give your final answer.]`
        : null;
    },
  };
};

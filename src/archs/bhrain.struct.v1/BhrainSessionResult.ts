import type { BrainMessage } from '../../contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../../contract/BrainOutput.js';
import type { BhrainError } from '../../contract/errors.js';

/** .what = why a session ended */
export type BhrainTermination = 'complete' | 'max-iterations' | 'error' | 'clarification';

/**
 * .what = what one invocation produced: the answer, why it ended, what it cost, and everything that was said
 * .why = a caller (or the CLI) can print, meter, persist and resume from it; a failed run keeps its partial transcript
 */
export interface BhrainSessionResult {
  sessionUuid: string;
  /** the final answer; for max-iterations, the partial answer and an explanation; for error, what was said before it */
  output: string;
  termination: BhrainTermination;
  iterations: number;
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  /** every message of the session in order, including those later compacted out of the context */
  transcript: BrainMessage[];
  /** the context as it stood at the end (after compactions): what a continuation builds on */
  messages: BrainMessage[];
  compactions: Array<{ strategy: string; tokensBefore: number; tokensAfter: number }>;
  /** set when termination is 'error' */
  error: BhrainError | null;
}

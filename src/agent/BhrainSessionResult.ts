import type { BrainMessage } from '../core/contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';
import type { BhrainError } from '../core/contract/errors.js';
import type { BhrainSession, BhrainSubagent, BhrainTermination } from './BhrainSession.js';
import type { BhrainBudgetReached } from './session/checkBudget.js';

export type { BhrainTermination, BhrainSessionStatus, BhrainSessionTokenUsage, BhrainSession, BhrainSubagent } from './BhrainSession.js';

/** .what = a subagent and what it did: the name used before BhrainSubagent (docs/design/loop.md#subagents) */
export type BhrainSubagentRecord = BhrainSubagent;

/** .what = who denied a tool call: the permission guard, the user at a prompt, nobody could be asked (no prompter), or a PreToolUse hook */
export type BhrainDenialSource = 'guard' | 'prompt' | 'no-prompter' | 'hook';

/** .what = a tool call that was not run because it was denied, and why */
export interface BhrainToolCallDenial {
  callId: string;
  toolName: string;
  reason: string;
  by: BhrainDenialSource;
}

/**
 * .what = the tool calls of a session, counted
 * .note = made = every call answered; failed = answered with an error that was not a denial (invalid arguments, an
 *         unknown tool, a tool that failed or threw); denied = denied by the guard, refused at a prompt, or needing a
 *         prompt with no way to ask; promptedDenied = the denied ones that needed a prompt (refused, or no way to ask).
 *         So made = succeeded + failed + denied
 */
export interface BhrainToolCallCounts {
  made: number;
  failed: number;
  denied: number;
  promptedDenied: number;
  denials: BhrainToolCallDenial[];
}

/**
 * .what = what one invocation produced: the answer, why it ended, what it cost, and everything that was said
 * .why = a caller (or the CLI) can print, meter, persist and resume from it; a failed run keeps its partial transcript
 */
export interface BhrainSessionResult {
  sessionUuid: string;
  /** the final answer; for max-iterations and budget, the partial answer and an explanation; for refusal, the refusal text; for error, what was said before it */
  output: string;
  /**
   * bhrain's notice of an early stop (max-iterations, budget, terminated), as output ends with it after the partial
   * answer: why it stopped and how to go on; null when the session answered or failed. output without it is the model's
   * own text (the CLI prints that alone as the answer, and the notice on stderr)
   */
  notice: string | null;
  termination: BhrainTermination;
  /** why a caller terminated the session (BhrainLoop.terminate, brain.terminate); null when termination is not 'terminated' */
  terminationReason: string | null;
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
  /** the tool calls made, failed and denied, with each denial's reason */
  toolCalls: BhrainToolCallCounts;
  /** set when termination is 'budget': the limit reached, what was spent toward it, and its cap */
  budgetReached: BhrainBudgetReached | null;
  /** the session entity as it ended: COMPLETED or TERMINATED */
  session: BhrainSession;
  /**
   * every subagent this session spawned, and theirs in turn (flattened, in the order they finished; sessionUuid names
   * the session that spawned each); tokens and cash above include theirs
   */
  subagents: BhrainSubagent[];
}

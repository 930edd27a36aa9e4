import type { BrainAtomGeneration, BrainTruncatedToolCall } from '../../core/contract/BrainAtom.js';
import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { AbortedError, EmptyAnswerError, type BhrainError } from '../../core/contract/errors.js';
import { pluralize } from '../../core/text/pluralize.js';
import type { BhrainBudgetReached } from './checkBudget.js';
import { EMPTY_ANSWER_NUDGE } from '../constants.js';

/** .what = a line the loop logs about its decision: why it continues, or why it ends as it does */
export interface TurnNote {
  level: 'info' | 'warn';
  message: string;
}

/**
 * .what = what the session does next (after openai-agents-js's NextStep): run another iteration, with messages to
 *         append first; end with the model's answer; or stop before the task was done
 * .why = every way a session goes on or ends is one value, decided by pure functions (resolveTurn after a turn,
 *        resolveBoundary before one), so each rule reads and tests alone
 */
export type NextStep =
  | { type: 'run_again'; append: readonly BrainMessage[]; nudgedEmpty: boolean; note: TurnNote | null }
  | { type: 'final_output'; termination: 'complete' | 'refusal'; output: string; note: TurnNote | null }
  | { type: 'stop'; stop: SessionStop; note: TurnNote | null };

/** .what = why a session stopped before the task was done: the termination, and what goes with it */
export type SessionStop =
  | { termination: 'max-iterations' }
  | { termination: 'budget'; budgetReached: BhrainBudgetReached }
  | { termination: 'terminated'; reason: string }
  | { termination: 'error'; error: BhrainError };

/**
 * .what = what the model is told when the output-token limit cut its tool call(s) off mid-arguments
 * .why = the call was not run (half-parsed arguments would write half a file); a smaller step fits the limit
 */
export const describeTruncatedToolCalls = (calls: readonly BrainTruncatedToolCall[]): string =>
  `[bhrain: your last tool call (${calls.map((call) => `${call.name}, ${call.receivedChars} characters of arguments received`).join('; ')}) was cut off by the output-token limit and was not run. Continue in smaller steps so each call fits the output limit: e.g. write a big file in parts (write the first part, then add the rest with further edit calls), or split a long command or edit into several.]`;

/**
 * .what = decides the next step after a turn (its generation, whose tool calls already ran and were appended):
 *         - a refusal ends the session as such: its text is the answer, the refused request is never sent again;
 *         - calls cut off by the output limit were not run: the model is told so, and continues in smaller steps;
 *         - a paused turn (anthropic's pause_turn) with no calls is sent back as is, and the model continues it;
 *         - an empty answer (no text, no call) is nudged once; a second in a row ends the session with an error;
 *         - an answer without calls is the final output;
 *         - otherwise the loop runs again with the calls' results
 * .why = pure: the same turn always resolves the same way, and each case is tested alone
 */
export const resolveTurn = (input: {
  generation: Pick<BrainAtomGeneration, 'message' | 'stopReason' | 'truncatedToolCalls'>;
  /** the turn before this one was an empty answer, and the model was nudged */
  nudgedEmpty: boolean;
  iteration: number;
  /** the atom's slug, for what the model and the log are told */
  atom: string;
}): NextStep => {
  const { message, stopReason } = input.generation;
  const at = `iteration ${input.iteration}`;
  const hasCalls = message.toolCalls.length > 0;
  if (stopReason === 'refusal')
    return {
      type: 'final_output',
      termination: 'refusal',
      output: message.content.trim() ? message.content : `[${input.atom} refused the request (stop reason refusal) and gave no text]`,
      note: { level: 'warn', message: `${at}: ${input.atom} refused the request (stop reason refusal); it is not retried` },
    };
  const truncated = input.generation.truncatedToolCalls ?? [];
  if (truncated.length)
    return {
      type: 'run_again',
      append: [{ role: 'user', content: describeTruncatedToolCalls(truncated) }],
      nudgedEmpty: false,
      note: {
        level: 'warn',
        message: `${at}: ${truncated.map((call) => call.name).join(', ')} was cut off by the output-token limit and not run; the model is asked to continue in smaller steps`,
      },
    };
  if (stopReason === 'pause_turn' && !hasCalls)
    return {
      type: 'run_again',
      append: [],
      nudgedEmpty: input.nudgedEmpty,
      note: { level: 'info', message: `${at}: the supplier paused the turn (pause_turn); it is continued` },
    };
  if (!hasCalls && !message.content.trim())
    return input.nudgedEmpty
      ? {
          type: 'stop',
          stop: {
            termination: 'error',
            error: new EmptyAnswerError(
              `${input.atom} returned an empty answer twice in a row (no text, no tool call); the session stopped with its transcript kept`,
            ),
          },
          note: null,
        }
      : {
          type: 'run_again',
          append: [{ role: 'user', content: EMPTY_ANSWER_NUDGE }],
          nudgedEmpty: true,
          note: { level: 'warn', message: `${at}: the model returned an empty answer; it is asked to continue` },
        };
  // only empty answers in a row end the session: one that said something earns the model a fresh nudge
  if (!hasCalls)
    return {
      type: 'final_output',
      termination: 'complete',
      output: message.content,
      note:
        stopReason === 'max_tokens' ? { level: 'warn', message: 'the answer reached the output token limit and may be cut short' } : null,
    };
  return { type: 'run_again', append: [], nudgedEmpty: false, note: null };
};

/**
 * .what = decides, before an iteration, whether the session may run it: not past maxIterations, not aborted by the
 *         caller, not terminated, not over its budget; null = it may
 * .why = pure: the boundary's order of checks is one readable rule (abort before terminate: an abort is the harder stop)
 */
export const resolveBoundary = (input: {
  iteration: number;
  maxIterations: number;
  aborted: boolean;
  terminateRequest: { reason: string } | null;
  budgetReached: BhrainBudgetReached | null;
}): SessionStop | null => {
  if (input.iteration >= input.maxIterations) return { termination: 'max-iterations' };
  if (input.aborted)
    return {
      termination: 'error',
      error: new AbortedError(`the session was interrupted after ${pluralize(input.iteration, 'iteration')}; its transcript is kept`),
    };
  if (input.terminateRequest) return { termination: 'terminated', reason: input.terminateRequest.reason };
  if (input.budgetReached) return { termination: 'budget', budgetReached: input.budgetReached };
  return null;
};

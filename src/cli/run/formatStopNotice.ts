import { describeBudgetReached, type BhrainBudgetReached } from '../../agent/session/checkBudget.js';
import { describeTermination } from '../describeTermination.js';

/** .what = how to go on after each early stop */
const HOW_TO_GO_ON: Readonly<Record<string, string>> = {
  'max-iterations': 'Continue from its series (--continue, or --on-series), or allow more iterations (--max-iterations)',
  budget: 'Continue from its series (--continue, or --on-series), or raise the limit',
  terminated: 'Continue from its series (--continue, or --on-series)',
};

/**
 * .what = the stderr line of a run that stopped before its task was done (max-iterations, budget, a hook's stop): how it
 *         ended, in the words of describeTermination, why, whether stdout holds a partial answer, and how to go on; null
 *         for any other ending
 * .why = stdout carries the answer alone, so the answer can be piped or redirected: bhrain's own words about it go here
 */
export const formatStopNotice = (input: {
  skill: string;
  termination: string;
  iterations: number;
  budgetReached: BhrainBudgetReached | null;
  terminationReason: string | null;
  /** whether stdout got some of the model's text */
  answered: boolean;
}): string | null => {
  const how = HOW_TO_GO_ON[input.termination];
  if (!how) return null;
  const why = input.budgetReached ? describeBudgetReached(input.budgetReached) : input.terminationReason;
  const answer = input.answered ? 'The answer on stdout is partial' : 'Nothing was answered: stdout is empty';
  return `bhrain ${input.skill}: ${describeTermination(input)}, before the task was complete${why ? `: ${why}` : ''}. ${answer}. ${how}.`;
};

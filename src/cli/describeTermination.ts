import { pluralize } from '../core/text/pluralize.js';
import type { SkillOutputJson } from './skillOutputJson.js';

/** .what = how a run ended, as the JSON result's `termination` names it */
export type SkillTermination = SkillOutputJson['termination'];

/** .what = each termination in words, but max-iterations, whose words are its count */
const WORDS: Record<Exclude<SkillTermination, 'max-iterations'>, string> = {
  complete: 'complete',
  budget: 'budget reached',
  error: 'failed',
  interrupted: 'interrupted',
  refusal: 'refused by the model',
  clarification: 'asked for a task (the prompt was empty)',
  terminated: 'stopped by a hook',
  usage: 'not started (bad usage)',
};

/**
 * .what = a run's termination in words, with its iterations: `complete after 1 iteration`, `stopped after 2 iterations`
 *         (max-iterations), `budget reached after 6 iterations`, `interrupted after 1 iteration`; no count when there were
 *         none. A value of no row (a record of a later version) is said as it is
 * .why = the one place the CLI words how a run ended (its status line and its stop notice on stderr), so what stderr says
 *        is what the JSON's termination says
 */
export const describeTermination = (input: { termination: string; iterations: number | null }): string => {
  const { termination, iterations } = input;
  if (termination === 'max-iterations')
    return iterations ? `stopped after ${pluralize(iterations, 'iteration')}` : 'stopped at --max-iterations';
  const words = (WORDS as Record<string, string>)[termination] ?? termination;
  return iterations ? `${words} after ${pluralize(iterations, 'iteration')}` : words;
};

import { OutputInvalidError } from '../../core/contract/errors.js';
import { validateAnswer, type CompiledOutputSchema, type OutputSchema } from './structuredOutput.js';

/** .what = how a structured-output turn ended: a value that fits, an answer that still did not, or no answer to judge */
export type StructuredOutputVerdict<TOutput> =
  { kind: 'valid'; value: TOutput } | { kind: 'invalid'; error: OutputInvalidError } | { kind: 'unjudged' };

/** .what = the user message of the corrective turn: why the answer did not fit, and what to send instead */
export const genCorrectivePrompt = (reason: string): string =>
  `Your answer does not fit the required schema: ${reason}\nReply again with only the corrected JSON.`;

/**
 * .what = the structured-output turn: judges a run's answer against the schema and, when it does not fit, makes one
 *         corrective run that tells the model why, then judges that one; a run that ended without an answer to judge
 *         (it called tools, or was cut short) is left unjudged
 * .why = one policy for atom.ask and the rhachet atom (a run is one generation) and the repl (a run is a loop session):
 *        the same prompt, one corrective turn, the same OutputInvalidError. How to run again is the caller's (correct)
 */
export const runStructuredOutputTurn = async <TRun, TOutput>(input: {
  /** the brain's slug, for the error */
  slug: string;
  schema: OutputSchema<TOutput> | CompiledOutputSchema<TOutput>;
  /** the run whose answer is judged first */
  first: TRun;
  /** a run's answer text, or null when it has none to judge */
  answerOf: (run: TRun) => string | null;
  /** one more run on top of `run`, whose next user message is `prompt` */
  correct: (input: { run: TRun; prompt: string }) => Promise<TRun>;
}): Promise<{ run: TRun; verdict: StructuredOutputVerdict<TOutput> }> => {
  const judge = async (run: TRun, corrected: boolean): Promise<{ run: TRun; verdict: StructuredOutputVerdict<TOutput> }> => {
    const answer = input.answerOf(run);
    if (answer === null) return { run, verdict: { kind: 'unjudged' } };
    const verdict = validateAnswer(answer, input.schema);
    if (verdict.ok) return { run, verdict: { kind: 'valid', value: verdict.value } };
    if (!corrected) return judge(await input.correct({ run, prompt: genCorrectivePrompt(verdict.reason) }), true);
    const error = new OutputInvalidError(
      `${input.slug} did not return output that fits the schema, after one corrective turn: ${verdict.reason}`,
      answer,
    );
    return { run, verdict: { kind: 'invalid', error } };
  };
  return judge(input.first, false);
};

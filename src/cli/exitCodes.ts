import type { BhrainTermination } from '../agent/BhrainSessionResult.js';

/**
 * .what = the exit codes of `bhrain act` / `bhrain ask` (and the rhachet skills), documented in the readme
 * .why = CI steps branch on them: each kind of ending has its own code
 */
export const EXIT_CODES = {
  complete: 0,
  /** an unexpected crash (a bug): a clear message, the stack with --debug */
  crash: 1,
  /** bad usage or input: missing input, unknown atom or arch, bad ref, bad flag */
  badRequest: 2,
  /** max iterations reached: the partial answer is still printed */
  maxIterations: 3,
  /** the LLM is unreachable, overloaded past retries, or refused the credentials */
  supplier: 4,
  /** the loop failed (or the ref store could not be written) */
  loop: 5,
  /** a budget (--max-budget-usd, --max-tokens, --max-wall-time) was reached: the partial answer is printed */
  budget: 6,
  /** --fail-on-denied was given and a tool call was denied */
  denied: 7,
  /** --json-schema: the answer did not validate, after one retry with the validation error */
  outputInvalid: 8,
  /** the model refused the request (a refusal stop reason): the refusal text is printed, nothing is retried */
  refusal: 9,
  /** interrupted (SIGINT or SIGTERM): the run stopped, its refs saved */
  interrupted: 130,
} as const;

/** .what = the exit code for a session that ended without throwing */
export const exitCodeOf = (termination: BhrainTermination, errorExitCode: number | null): number =>
  termination === 'complete'
    ? EXIT_CODES.complete
    : termination === 'max-iterations'
      ? EXIT_CODES.maxIterations
      : termination === 'budget'
        ? EXIT_CODES.budget
        : termination === 'refusal'
          ? EXIT_CODES.refusal
          : (errorExitCode ?? EXIT_CODES.loop);

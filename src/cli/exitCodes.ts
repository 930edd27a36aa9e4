import type { BhrainTermination } from '../agent/BhrainSessionResult.js';
import { AbortedError, BadRequestError, BhrainError, LoopError, OutputInvalidError, SupplierError } from '../core/contract/errors.js';

/**
 * .what = the exit codes of `bhrain act` / `bhrain ask` (and the rhachet skills), documented in docs/cli-reference.md#exit-codes (a test checks every code has its row)
 * .why = CI steps branch on them: each kind of ending has its own code
 */
export const EXIT_CODES = {
  complete: 0,
  /** an unexpected crash (a bug): a clear message, the stack with --debug */
  crash: 1,
  /** bad usage or input: missing input, unknown atom or arch, bad ref, bad flag */
  badRequest: 2,
  /** max iterations reached: the partial answer (the model's text so far, maybe none) is still printed, and stderr says why */
  maxIterations: 3,
  /** the LLM is unreachable, overloaded past retries, or refused the credentials */
  supplier: 4,
  /** the loop failed (or the ref store could not be written) */
  loop: 5,
  /** a budget (--max-budget-usd, --max-tokens, --max-wall-time) was reached: the partial answer is printed, stderr says which */
  budget: 6,
  /** --fail-on-denied was given and a tool call was denied */
  denied: 7,
  /** --json-schema: the answer did not validate, after one retry with the validation error */
  outputInvalid: 8,
  /** the model refused the request (a refusal stop reason): the refusal text is printed, nothing is retried */
  refusal: 9,
  /** a hook stopped the run: a UserPromptSubmit hook blocked the prompt, or a hook said continue: false */
  hookStopped: 10,
  /** interrupted (SIGINT or SIGTERM): the run stopped, its refs saved */
  interrupted: 130,
} as const;

/** .what = an error class, abstract or not: what `instanceof` takes */
type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * .what = the one map from error class to exit code: the first row whose class the error is an instance of wins, so a
 *         subclass is listed before its parent (OutputInvalidError is a SupplierError, but has its own code)
 * .why = the library's errors carry no exit code (a library caller tells them apart by class); the CLI alone decides
 *        what a class means to a shell. A BhrainError of no row (LoopError, RefStoreWriteError, RunRecordWriteError:
 *        a run that failed after it started) ends as the loop's failure; anything else is a crash (a bug)
 */
export const EXIT_CODE_OF_ERROR: ReadonlyArray<readonly [ErrorClass, number]> = [
  [OutputInvalidError, EXIT_CODES.outputInvalid],
  [AbortedError, EXIT_CODES.interrupted],
  [BadRequestError, EXIT_CODES.badRequest],
  [SupplierError, EXIT_CODES.supplier],
  [LoopError, EXIT_CODES.loop],
  [BhrainError, EXIT_CODES.loop],
];

/** .what = the exit code of an error that ended a run or a command: its class's row, else 1 (a crash) */
export const exitCodeOfError = (error: unknown): number =>
  EXIT_CODE_OF_ERROR.find(([errorClass]) => error instanceof errorClass)?.[1] ?? EXIT_CODES.crash;

/** .what = the exit code for a session that ended without throwing; its error's, when it ended in one */
export const exitCodeOf = (termination: BhrainTermination, error: unknown = null): number =>
  error
    ? exitCodeOfError(error)
    : termination === 'complete'
      ? EXIT_CODES.complete
      : termination === 'max-iterations'
        ? EXIT_CODES.maxIterations
        : termination === 'budget'
          ? EXIT_CODES.budget
          : termination === 'refusal'
            ? EXIT_CODES.refusal
            : // the CLI never terminates a session itself: a hook did
              termination === 'terminated'
              ? EXIT_CODES.hookStopped
              : EXIT_CODES.loop;

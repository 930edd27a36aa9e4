import { LoopError } from '../../core/contract/errors.js';

/**
 * .what = a tool failure the model reads and corrects: thrown from a tool's execute, it becomes a failed result whose
 *         output is exactly this message, and the session goes on
 * .why = a tool says what went wrong and what to try instead, without the "failed with an unexpected error" wording and
 *        the error log an unexpected throw gets
 */
export class BhrainToolError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BhrainToolError';
  }
}

/**
 * .what = a tool failure that ends the session: thrown from a tool's execute, the call is answered with a failed result
 *         (so no call is left without one), no later call of the turn runs, and the session ends with termination
 *         'error' and this error
 * .why = some failures no retry by the model can fix and no later step should run past: a broken credential, a store
 *        that must not be written half-way; a LoopError, so the CLI reports it as the loop's failure
 */
export class BhrainToolFatalError extends LoopError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BhrainToolFatalError';
  }
}

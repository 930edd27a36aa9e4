/**
 * .what = the one error hierarchy of bhrain: every failure a caller can see is one of these
 * .why = a caller tells failures apart by class (the CLI maps each class to its exit code: src/cli/exitCodes.ts), and
 *        each message says what was wrong and how to fix it
 */
export abstract class BhrainError extends Error {
  /** a stable machine-readable code, e.g. 'BAD_REQUEST' */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * .what = the caller asked for something invalid: a bad flag, an unknown slug, a missing or broken ref
 * .why = the caller can fix it
 */
export class BadRequestError extends BhrainError {
  readonly code: string = 'BAD_REQUEST';
}

/**
 * .what = a serialized ref of a schemaVersion this bhrain cannot read (written by a newer one)
 * .why = a bad request, not damage: the fix is to upgrade bhrain, so readers report it apart from a corrupt ref
 */
export class RefSchemaVersionError extends BadRequestError {
  override readonly code = 'REF_SCHEMA_VERSION';
}

/**
 * .what = the conversation or input does not fit the model's context window
 * .why = a caller-side limit, so it is a bad request; carries the numbers so the message can name the limit
 */
export class ContextOverflowError extends BadRequestError {
  override readonly code = 'CONTEXT_OVERFLOW';
  constructor(
    message: string,
    readonly limit: { tokens: number | null; actual: number | null },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * .what = a failure at the LLM supplier, outside the caller: auth, unreachable, overloaded, rejected
 * .why = distinct from caller mistakes and loop errors: retrying later, or fixing the credentials, may help
 */
export class SupplierError extends BhrainError {
  readonly code: string = 'SUPPLIER';
}

/** .what = the supplier refused our credentials, or none were given; the message names the env var to set */
export class AuthFailedError extends SupplierError {
  override readonly code = 'AUTH_FAILED';
}

/** .what = the supplier could not be reached or stayed overloaded after bounded retries */
export class SupplierUnavailableError extends SupplierError {
  override readonly code = 'SUPPLIER_UNAVAILABLE';
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** .what = the supplier rejected the request for a reason that retries cannot fix (a 4xx other than auth or overflow) */
export class SupplierRejectedError extends SupplierError {
  override readonly code = 'SUPPLIER_REJECTED';
}

/** .what = the model's answer did not satisfy the requested output schema, even after one corrective retry */
export class OutputInvalidError extends SupplierError {
  override readonly code = 'OUTPUT_INVALID';
  constructor(
    message: string,
    readonly output: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * .what = the agentic loop itself failed: a bug or an unexpected fault, not the caller nor the supplier
 * .why = distinct from bad input and supplier failures
 */
export class LoopError extends BhrainError {
  readonly code = 'LOOP';
}

/**
 * .what = the supplier cannot continue from a prior ref; the error carries that ref
 * .why = the caller recovers by continuing the same ref on a capable brain (refs are supplier-agnostic plaintext)
 */
export class ContinuationNotSupportedError extends BadRequestError {
  override readonly code = 'CONTINUATION_NOT_SUPPORTED';
  constructor(
    message: string,
    /** the ref the caller tried to continue, for recovery on another brain */
    readonly ref: { episode?: unknown; series?: unknown },
  ) {
    super(message);
  }
}

/**
 * .what = an episode that a series already compacted was passed as on.episode
 * .why = a compacted episode is closed; its recap lives on in the series, which is where to continue
 */
export class EpisodeCompactedError extends BadRequestError {
  override readonly code = 'EPISODE_COMPACTED';
  constructor(
    message: string,
    readonly ref: { episode: unknown; series: unknown | null },
  ) {
    super(message);
  }
}

/** .what = the model answered with nothing (no text, no tool call), even after being told so once */
export class EmptyAnswerError extends SupplierError {
  override readonly code = 'EMPTY_ANSWER';
}

/**
 * .what = the caller aborted the call through context.signal
 * .why = an abort is the caller's decision, not a supplier failure nor a bug
 */
export class AbortedError extends BhrainError {
  readonly code = 'ABORTED';
}

/** .what = the ref store could not write a ref (disk full, read-only, permissions, a store unreachable); earlier refs are untouched */
export class RefStoreWriteError extends BhrainError {
  readonly code = 'REF_STORE_WRITE';
}

/** .what = the ref store could not read a ref (unreachable, refused, unreadable); nothing read from it is used (exit 2) */
export class RefStoreReadError extends BadRequestError {
  override readonly code = 'REF_STORE_READ';
}

import { AuthFailedError, BadRequestError, BhrainError, OutputInvalidError, SupplierError } from '../../core/contract/errors.js';
import { mapSupplierError } from '../mapSupplierError.js';

/** .what = error codes of a connection that failed before an answer: the supplier's SDK may say them in code or cause */
const NETWORK_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|UND_ERR_\w+)$/;

/** .what = whether a failure came over the wire (an HTTP status, or a connection that failed), which retries may fix */
export const isWireFailure = (error: unknown): boolean => {
  const given = error as { status?: unknown; code?: unknown; name?: unknown; cause?: { code?: unknown } } | null;
  if (typeof given?.status === 'number') return true;
  const code = String(given?.code ?? given?.cause?.code ?? '');
  return NETWORK_CODES.test(code) || given?.name === 'APIConnectionError' || given?.name === 'APIConnectionTimeoutError';
};

/**
 * .what = an error's kind: its name, else its class's name, else the "<Kind>Error: " its message begins with
 * .why = helpful-errors before 1.7 leaves `name` as 'Error' and says the class in the message ("BadRequestError: ...");
 *        rhachet-brains-anthropic 0.4.1 throws those
 */
const kindOf = (error: unknown): string => {
  const given = error as { name?: unknown; constructor?: { name?: unknown }; message?: unknown } | null;
  const named = [given?.name, given?.constructor?.name, /^(\w+Error): /.exec(String(given?.message ?? ''))?.[1]];
  return (named.find((name) => typeof name === 'string' && name && name !== 'Error') as string | undefined) ?? 'Error';
};

/** .what = a credential or a key named in a message */
const NAMES_CREDS = /api[_ -]?key|credential|creds|token|unauthori[sz]ed|keyrack/i;

/**
 * .what = a rhachet atom's failure as one of bhrain's errors, so the CLI's exit codes hold (docs/contracts.md#errors-of-a-rhachet-atom):
 *         - a BhrainError stays itself;
 *         - an HTTP status or a failed connection is read as our own atoms read them (auth 401/403, overflow, a 4xx
 *           rejection, else unavailable): mapSupplierError;
 *         - ZodError or SyntaxError (the supplier's own parse of the answer failed) is OutputInvalidError;
 *         - BadRequestError or ConstraintError (helpful-errors: the supplier says its caller must fix something) is
 *           AuthFailedError when it names a key or credential, else BadRequestError;
 *         - anything else (MalfunctionError, a TypeError: a bug in the supplier package) is SupplierError
 * .why = a rhachet supplier throws its own errors (helpful-errors, its SDK's); the CLI decides by our classes alone
 */
export const mapRhachetError = (input: { error: unknown; slug: string; keyEnvVars: readonly string[]; suppliesKey: string }): Error => {
  const { error, slug } = input;
  if (error instanceof BhrainError) return error;
  if (isWireFailure(error)) return mapSupplierError({ error, supplier: slug, keyEnvVars: input.keyEnvVars });
  const name = kindOf(error);
  const raw = (error as Error)?.message ?? String(error);
  // the kind said once: helpful-errors 1.5 puts it in the message too
  const message = raw.startsWith(`${name}: `) ? raw.slice(name.length + 2) : raw;
  const said = `${slug} failed (${name}: ${message})`;
  if (name === 'ZodError' || name === 'SyntaxError')
    return new OutputInvalidError(`${said}: its answer did not fit the output it parses`, '', { cause: error });
  if (name === 'BadRequestError' || name === 'ConstraintError')
    return NAMES_CREDS.test(message)
      ? new AuthFailedError(
          `${said}. bhrain passes context['${input.suppliesKey}'].creds from ${input.keyEnvVars.length ? input.keyEnvVars.join(' or ') : 'no env var it knows for this supplier'}: set it, or see docs/contracts.md#credentials`,
          { cause: error },
        )
      : new BadRequestError(said, { cause: error });
  return new SupplierError(said, { cause: error });
};

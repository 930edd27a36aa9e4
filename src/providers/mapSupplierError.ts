import {
  AuthFailedError,
  BhrainError,
  ContextOverflowError,
  SupplierRejectedError,
  SupplierUnavailableError,
} from '../core/contract/errors.js';

const OVERFLOW_PATTERN = /prompt is too long|context_length_exceeded|maximum context length|context window|too many (input )?tokens/i;

/** .what = the (actual, limit) token numbers a supplier's overflow message states, when it states them */
const readOverflowNumbers = (message: string): { tokens: number | null; actual: number | null } => {
  const anthropic = /(\d+) tokens > (\d+)/.exec(message);
  if (anthropic) return { actual: Number(anthropic[1]), tokens: Number(anthropic[2]) };
  const openai = /maximum context length is (\d+) tokens.*?resulted in (\d+) tokens/is.exec(message);
  if (openai) return { tokens: Number(openai[1]), actual: Number(openai[2]) };
  return { tokens: null, actual: null };
};

/**
 * .what = maps a failed supplier call (from either SDK) to bhrain's typed errors
 * .why = the loop and the CLI reason about classes (auth, overflow, rejected), never about vendor error shapes; the
 *        messages name the env var or flag to change, not an SDK field
 */
export const mapSupplierError = (input: {
  error: unknown;
  /** the atom's slug, e.g. claude/sonnet */
  supplier: string;
  /** env vars that can hold a credential for this supplier, in order of preference */
  keyEnvVars: readonly string[];
  /** where the refused credential came from (an env var or a context.creds field), when one was sent */
  credential?: string;
  /** the model id sent, to tell "no such model" from "no such endpoint" on a 404 */
  model?: string;
  /** the full URL called, what a base URL for this protocol looks like, and the env var that sets it */
  endpoint?: { url: string; hint: string; urlEnvVar: string };
}): Error => {
  const { error } = input;
  if (error instanceof BhrainError) return error;
  const status = (error as { status?: unknown })?.status;
  const message = (error as Error)?.message ?? String(error);
  const code = (error as { code?: unknown })?.code;
  if (status === 401 || status === 403) {
    const sent = input.credential && input.credential !== 'none' ? input.credential : null;
    return new AuthFailedError(
      `${input.supplier} rejected the credentials ${sent ? `from ${sent}` : '(no key was sent)'} (HTTP ${status}: ${message}). Set ${sent ?? input.keyEnvVars.join(' or ')} to a valid key`,
      { cause: error },
    );
  }
  if (status === 404 && input.endpoint) {
    // a server that knows the route but not the model names the model; a wrong base URL names nothing of ours
    if (input.model && message.includes(input.model))
      return new SupplierRejectedError(
        `${input.supplier}: the endpoint ${input.endpoint.url} does not serve the model '${input.model}' (HTTP 404: ${message}). Check the model id given by --model or --atom`,
        { cause: error },
      );
    return new SupplierRejectedError(
      `${input.supplier}: the endpoint ${input.endpoint.url} answered 404 (${message}): ${input.endpoint.hint}. Set the base URL with --base-url or ${input.endpoint.urlEnvVar}`,
      { cause: error },
    );
  }
  if (
    status === 413 ||
    ((status === 400 || status === undefined) && (OVERFLOW_PATTERN.test(message) || code === 'context_length_exceeded'))
  ) {
    const limit = readOverflowNumbers(message);
    return new ContextOverflowError(
      `the conversation does not fit ${input.supplier}'s context window${limit.tokens ? ` of ${limit.tokens} tokens` : ''}${limit.actual ? ` (it is ${limit.actual} tokens)` : ''}: shorten the input, or continue from a compacted series`,
      limit,
      { cause: error },
    );
  }
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new SupplierRejectedError(`${input.supplier} rejected the request (HTTP ${status}: ${message})`, {
      cause: error,
    });
  return new SupplierUnavailableError(`${input.supplier} failed: ${message}`, 1, { cause: error });
};

import {
  AuthFailedError,
  BhrainError,
  ContextOverflowError,
  SupplierRejectedError,
  SupplierUnavailableError,
} from '../contract/errors.js';

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
 * .why = the loop and the CLI reason about classes (auth, overflow, rejected), never about vendor error shapes
 */
export const mapSupplierError = (input: { error: unknown; supplier: string; keyEnvVars: readonly string[] }): Error => {
  const { error } = input;
  if (error instanceof BhrainError) return error;
  const status = (error as { status?: unknown })?.status;
  const message = (error as Error)?.message ?? String(error);
  const code = (error as { code?: unknown })?.code;
  if (status === 401 || status === 403)
    return new AuthFailedError(
      `${input.supplier} rejected the credentials (HTTP ${status}: ${message}). Set ${input.keyEnvVars.join(' or ')} to a valid API key`,
      { cause: error },
    );
  if (status === 413 || ((status === 400 || status === undefined) && (OVERFLOW_PATTERN.test(message) || code === 'context_length_exceeded'))) {
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

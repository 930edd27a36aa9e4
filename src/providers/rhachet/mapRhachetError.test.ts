import { describe, expect, it } from 'vitest';

import { AuthFailedError, BadRequestError, OutputInvalidError, SupplierError } from '../../core/contract/errors.js';
import { mapRhachetError } from './mapRhachetError.js';

const map = (error: unknown) =>
  mapRhachetError({ error, slug: 'anthropic/claude/haiku', keyEnvVars: ['ANTHROPIC_API_KEY'], suppliesKey: 'brain.supplier.anthropic' });

/** .what = the errors helpful-errors 1.5 throws (rhachet-brains-anthropic 0.4.1's): `name` left 'Error', the class in the message */
const helpfulErrors15 = {
  BadRequestError: class BadRequestError extends Error {
    constructor(message: string) {
      super(`BadRequestError: ${message}`);
    }
  },
};

describe('mapRhachetError', () => {
  it("a helpful-errors 1.5 BadRequestError (its name 'Error') is our BadRequestError (exit 2), as a newer one is", () => {
    const refused = map(
      new helpfulErrors15.BadRequestError('episode continuation is not supported with haiku models when using structured outputs'),
    );
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused.message).toBe(
      'anthropic/claude/haiku failed (BadRequestError: episode continuation is not supported with haiku models when using structured outputs)',
    );
    expect(map(Object.assign(new Error('BadRequestError: no api key'), { name: 'Error' }))).toBeInstanceOf(AuthFailedError);
  });

  it('its own parse failing is OutputInvalidError; a bug in the package (a TypeError) is SupplierError', () => {
    expect(map(new SyntaxError('Unexpected token'))).toBeInstanceOf(OutputInvalidError);
    expect(map(new TypeError('x is not a function'))).toBeInstanceOf(SupplierError);
    expect(map(new Error('plain'))).toBeInstanceOf(SupplierError);
  });
});

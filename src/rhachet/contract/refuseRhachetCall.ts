import { BadRequestError } from '../../core/contract/errors.js';

/**
 * .what = fails with a BadRequestError when a brain of bhrain's own API (`ask({ say })`, `act({ do })`) is called in rhachet's
 *         shape (`{ prompt, role, schema }`), naming the adapters that take that shape
 * .why = the two shapes live side by side; a caller who mixed them up learns which to use, instead of a TypeError
 */
export const refuseRhachetCall = (input: { call: unknown; field: 'say' | 'do'; brain: string; method: 'ask' | 'act' }): void => {
  const call = input.call as Record<string, unknown> | null | undefined;
  if (!call || typeof call !== 'object' || typeof call[input.field] === 'string' || !('prompt' in call)) return;
  throw new BadRequestError(
    `${input.brain}.${input.method}() was called in rhachet's shape ({ prompt, role, schema }), but it takes bhrain's shape ({ ${input.field} }). Pass { ${input.field}: <text> }, or call the rhachet-shaped brains: getBrainAtomsByBhrain() / getBrainReplsByBhrain(), or genRhachetBrainAtom / genRhachetBrainRepl`,
  );
};

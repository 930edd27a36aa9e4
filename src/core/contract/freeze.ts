/**
 * .what = deep-freezes a plain value graph
 * .why = brain literals are immutable; freezing makes mutation throw in strict mode instead of corrupting a saved checkpoint
 */
export const freezeDeep = <T>(value: T): T => {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
};

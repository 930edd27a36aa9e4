import * as z from 'zod/mini';

/** .what = a number sent as a string ("10"), as a number; anything else as it came, for the schema to judge */
const asNumberIfNumeric = (value: unknown): unknown =>
  typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;

/** .what = "true" and "false" sent as strings, as booleans; anything else as it came */
const asBooleanIfWord = (value: unknown): unknown => (value === 'true' ? true : value === 'false' ? false : value);

/** .what = null as a field left out */
const nullAsAbsent = (value: unknown): unknown => (value === null ? undefined : value);

/**
 * .what = schema pieces (zod/mini) that accept the quirks models have with tool arguments, in the schema itself
 * .why = models send numbers as strings ("10"), booleans as "true", and null for a field they leave out; each tool's
 *        schema says so once, and its JSON Schema still shows the model the type it should send
 */
export const lenientInput = {
  /** a whole number no smaller than min, or the same number as a string */
  integer: (min: number) =>
    z.pipe(
      z.transform((value: unknown) => asNumberIfNumeric(value) as number),
      z.int().check(z.minimum(min)),
    ),
  /** a boolean, or "true" / "false" */
  boolean: () =>
    z.pipe(
      z.transform((value: unknown) => asBooleanIfWord(value) as boolean),
      z.boolean(),
    ),
  /** a field that may be left out; null counts as left out */
  optional: <T extends z.ZodMiniType>(schema: T): z.ZodMiniOptional<T> =>
    // typed as the plain optional it reads as: the null it also takes never reaches execute
    z.optional(z.pipe(z.transform(nullAsAbsent), z.optional(schema) as z.ZodMiniType)) as unknown as z.ZodMiniOptional<T>,
  /** a string that is not empty */
  nonEmptyString: () => z.string().check(z.refine((value) => value !== '', 'must not be empty')),
  /** a path: a non-empty string without a NUL character (no file system takes one) */
  path: () =>
    z.string().check(
      z.refine((value) => value !== '', 'must not be empty'),
      z.refine((value) => !value.includes('\0'), 'must not contain a NUL character'),
    ),
};

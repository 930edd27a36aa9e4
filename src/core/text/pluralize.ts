/**
 * .what = a count with its noun, singular for exactly one: `1 iteration`, `2 iterations`, `0 iterations`
 * .why = one place says a count in words, so no line reads "1 iterations"; a noun whose plural is not its singular
 *        plus "s" gives its plural
 */
export const pluralize = (count: number, singular: string, plural = `${singular}s`): string =>
  `${count} ${count === 1 ? singular : plural}`;

/** .what = the edit distance of two short strings, case aside: insert, delete or substitute one character */
const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
};

/**
 * .what = the name of a list nearest to one given, within maxDistance edits (2 by default), for a "did you mean"; the
 *         first of the nearest, or undefined when none is that near
 * .why = one did-you-mean for every name a user can misspell: a settings key (`alow`), a permission rule's tool (`bsh`),
 *        an MCP server's name
 */
export const findNearestName = (given: string, names: readonly string[], maxDistance = 2): string | undefined => {
  let nearest: { name: string; edits: number } | undefined;
  for (const name of names) {
    const edits = distance(given, name);
    if (edits <= maxDistance && edits < (nearest?.edits ?? Infinity)) nearest = { name, edits };
  }
  return nearest?.name;
};

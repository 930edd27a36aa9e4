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
 *         first of the nearest; else the only name that begins with it (3 letters or more); else undefined
 * .why = one did-you-mean for every name a user can misspell: a settings key (`alow`), a permission rule's tool (`bsh`),
 *        an MCP server's name
 */
export const findNearestName = (given: string, names: readonly string[], maxDistance = 2): string | undefined => {
  let nearest: { name: string; edits: number } | undefined;
  for (const name of names) {
    const edits = distance(given, name);
    if (edits <= maxDistance && edits < (nearest?.edits ?? Infinity)) nearest = { name, edits };
  }
  if (nearest) return nearest.name;
  // a name cut short (`--max-budget` for `--max-budget-usd`): the one name it begins, when it begins only one
  const letters = given.replace(/^-+/, '');
  if (letters.length < 3) return undefined;
  const begun = names.filter((name) => name.toLowerCase().startsWith(given.toLowerCase()));
  return begun.length === 1 ? begun[0] : undefined;
};

/** .what = "did you mean 'x'? " for the nearest name, or nothing when none is near: the phrase every usage error ends with */
export const didYouMean = (given: string, names: readonly string[]): string => {
  const near = findNearestName(given, names);
  return near ? `did you mean '${near}'? ` : '';
};

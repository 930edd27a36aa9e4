import { readdir } from 'node:fs/promises';

import { SIMILAR_NAMES_MAX } from './constants.js';

/** .what = the edit distance between two short strings (insert, delete, substitute, swap two neighbours) */
const distance = (a: string, b: string): number => {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      // a typo that swaps two letters ('scr' for 'src') counts once
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  return rows[a.length][b.length];
};

/** .what = a name without its last extension: 'index.test.ts' → 'index.test' */
const stemOf = (name: string): string => (name.lastIndexOf('.') > 0 ? name.slice(0, name.lastIndexOf('.')) : name);

/**
 * .what = up to 5 names in a directory that look like the name the model asked for (typo, case, other extension)
 * .why = "not found" alone makes the model search; "did you mean utils.ts" lets it retry at once
 */
export const findSimilarNames = async (directory: string, name: string): Promise<string[]> => {
  const entries = await readdir(directory).catch(() => [] as string[]);
  const wanted = name.toLowerCase();
  const wantedStem = stemOf(wanted);
  // a typo budget that grows with the name, so 'a.ts' does not match everything
  const budget = Math.max(1, Math.floor(wanted.length / 4));
  const scored: { entry: string; score: number }[] = [];
  for (const entry of entries.slice(0, 10_000)) {
    const candidate = entry.toLowerCase();
    if (entry === name) continue;
    const candidateStem = stemOf(candidate);
    const editDistance = distance(wanted.slice(0, 100), candidate.slice(0, 100));
    const sameStem = candidateStem === wantedStem && wantedStem.length > 0;
    const contains = wantedStem.length >= 3 && (candidate.includes(wantedStem) || wanted.includes(candidateStem));
    if (editDistance <= budget || sameStem || (contains && candidateStem.length >= 3))
      scored.push({ entry, score: sameStem ? -1 : editDistance });
  }
  return scored
    .sort((a, b) => a.score - b.score || (a.entry < b.entry ? -1 : 1))
    .slice(0, SIMILAR_NAMES_MAX)
    .map((item) => item.entry);
};

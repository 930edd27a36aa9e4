/**
 * .what = orders paths component by component ('a/b' before 'a.txt'), like a sorted depth-first walk
 * .why = ripgrep's --sort path walks in this order; glob and both grep engines sort the same way so output is identical
 * .note = compares code units with '/' below every other character, which is the same order without splitting the
 *         paths, so sorting 100,000 paths stays cheap
 */
export const comparePaths = (left: string, right: string): number => {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a !== b) return a === 47 ? -1 : b === 47 ? 1 : a - b;
  }
  return left.length - right.length;
};

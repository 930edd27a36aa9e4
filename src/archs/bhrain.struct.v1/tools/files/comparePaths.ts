/**
 * .what = orders paths component by component ('a/b' before 'a.txt'), like a sorted depth-first walk
 * .why = ripgrep's --sort path walks in this order; glob and both grep engines sort the same way so output is identical
 */
export const comparePaths = (left: string, right: string): number => {
  const leftParts = left.split('/');
  const rightParts = right.split('/');
  const count = Math.min(leftParts.length, rightParts.length);
  for (let index = 0; index < count; index++) {
    const a = leftParts[index];
    const b = rightParts[index];
    if (a !== b) return a < b ? -1 : 1;
  }
  return leftParts.length - rightParts.length;
};

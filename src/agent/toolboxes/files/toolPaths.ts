import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * .what = the absolute path a tool acts on: relative paths resolve against the context's cwd, absolute ones stay
 * .why = one unambiguous path to show and check; write and edit then open it confined (openInsideWorkspace), the other
 *        tools leave confinement to the permission layer. A NUL character never gets here: each tool's schema refuses it
 */
export const resolveToolPath = (path: string, cwd: string): string => (isAbsolute(path) ? resolve(path) : resolve(cwd, path));

/**
 * .what = how a path is shown to the model: relative to cwd when it is inside cwd, absolute otherwise
 * .why = short paths save tokens and can be passed straight back to a tool; '../../..' chains would not
 */
export const displayPath = (absolutePath: string, cwd: string): string => {
  const relativePath = relative(cwd, absolutePath);
  if (relativePath === '') return '.';
  if (relativePath === '..' || relativePath.startsWith(`..${sep}`) || isAbsolute(relativePath)) return absolutePath;
  return sep === '/' ? relativePath : relativePath.split(sep).join('/');
};

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

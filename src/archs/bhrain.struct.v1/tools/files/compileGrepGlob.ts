import { globToRegExp } from './globToRegExp.js';

/**
 * .what = grep's file filter, with ripgrep's --glob meaning: no '/' matches a name at any depth, a '/' anchors it to
 *         the search root, a leading '!' excludes (and prunes matching directories)
 * .why = the built-in engine must pick exactly the files ripgrep picks for the same glob
 */
export const compileGrepGlob = (
  glob: string,
): { includesFile: (relativePath: string) => boolean; excludesDirectory: (relativePath: string) => boolean } => {
  const negated = glob.startsWith('!');
  const body = (negated ? glob.slice(1) : glob).replace(/\/+$/, '');
  const anchored = body.includes('/');
  const regex = globToRegExp(body.replace(/^\/+/, ''));
  const test = (relativePath: string) =>
    regex.test(anchored ? relativePath : relativePath.slice(relativePath.lastIndexOf('/') + 1));
  return {
    includesFile: (relativePath) => (negated ? !test(relativePath) : test(relativePath)),
    excludesDirectory: (relativePath) => negated && test(relativePath),
  };
};

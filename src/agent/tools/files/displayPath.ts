import { isAbsolute, relative, sep } from 'node:path';

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

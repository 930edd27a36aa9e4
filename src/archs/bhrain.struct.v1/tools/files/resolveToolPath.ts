import { isAbsolute, resolve } from 'node:path';

import { FilesToolInputError } from './FilesToolInputError.js';

/**
 * .what = the absolute path a tool acts on: relative paths resolve against the context's cwd, absolute ones stay
 * .why = confinement is the permission layer's decision, not the tool's; the tool only needs one unambiguous path
 */
export const resolveToolPath = (path: string, cwd: string): string => {
  if (path.includes('\0')) throw new FilesToolInputError('`path` must not contain a NUL character.');
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
};

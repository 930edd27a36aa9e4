import { isAbsolute, resolve } from 'node:path';

import { FilesToolInputError } from './FilesToolInputError.js';

/**
 * .what = the absolute path a tool acts on: relative paths resolve against the context's cwd, absolute ones stay
 * .why = one unambiguous path to show and check; write and edit then open it confined (openInsideWorkspace), the other
 *        tools leave confinement to the permission layer
 */
export const resolveToolPath = (path: string, cwd: string): string => {
  if (path.includes('\0')) throw new FilesToolInputError('`path` must not contain a NUL character.');
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
};

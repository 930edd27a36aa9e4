import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import { isUnder } from '../core/paths/isUnder.js';

/** .what = a path's real path, or the path itself when it has none (absent, or not ours to look into) */
const realOrSelf = (path: string): string => {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
};

/**
 * .what = whether a directory is relative, or lies inside any of `untrusted` (absolute directories: the workspace), by
 *         its path or its real path, against each root's path and real path (a link into the workspace is the workspace)
 */
export const isUntrustedDirectory = (directory: string, untrusted: readonly string[]): boolean => {
  if (!isAbsolute(directory)) return true;
  const real = realOrSelf(directory);
  return untrusted.some((root) => [root, realOrSelf(root)].some((each) => isUnder(each, directory) || isUnder(each, real)));
};

/**
 * .what = the first executable file named `name` in a PATH value, skipping relative entries and entries inside any of
 *         `untrusted` (absolute directories: the workspace); null when there is none
 * .why = a program bhrain starts itself outside the sandbox (git, ripgrep, bwrap) must not be one a model planted: `npm
 *        run` and `npx` put the project's node_modules/.bin first on PATH, and a relative entry (`.`, `bin`) resolves in
 *        the working directory; both are the model's to write
 * .note = synchronous (a few stats), so a caller that starts the program at once pays no promise per entry
 */
export const findHostProgram = (input: { name: string; path: string | undefined; untrusted?: readonly string[] }): string | null => {
  for (const directory of (input.path ?? '').split(delimiter)) {
    if (isUntrustedDirectory(directory, input.untrusted ?? [])) continue;
    const candidate = join(directory, input.name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here: the next entry
    }
  }
  return null;
};

import { realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute } from 'node:path';

import { BadRequestError } from '../../core/contract/errors.js';
import { isUnder } from '../../core/paths/isUnder.js';
import { findProtected } from '../../sandbox/protectedPaths.js';
import { resolveHiddenPaths } from '../../sandbox/resolveHiddenPaths.js';

/** .what = a path's real path, or null when it has none */
const realOrNull = (path: string): string | null => {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
};

/**
 * .what = the directories a session may change besides its working directory (BhrainContext.addDirs, --add-dir) as
 *         real paths, each checked: absolute, an existing directory, not hidden, not protected, and holding no directory
 *         of PATH; a BadRequestError names the first that is not, and why
 * .why = an added directory is confined as the working directory is (the sandbox binds it writable, the sweep and the
 *        write and edit tools guard what later programs trust in it), so it may be nothing the sandbox exists to keep:
 *        a credential store or $BHRAIN_HOME (hidden), a git hooks directory or a `.claude` (protected, whose insides
 *        would be a root's plain files), or a directory a program on PATH comes from, which bhrain and the user run
 *        outside any sandbox
 */
export const resolveAddDirs = (addDirs: readonly string[], context: { env: Record<string, string | undefined> }): string[] => {
  if (!addDirs.length) return [];
  const hidden = resolveHiddenPaths({}, { env: context.env });
  const pathDirs = (context.env.PATH ?? '').split(delimiter).filter((dir) => isAbsolute(dir));
  return addDirs.map((dir) => {
    const refuse = (why: string) => new BadRequestError(`cannot add the directory ${dir}: ${why}`);
    if (!isAbsolute(dir)) throw refuse('it is not an absolute path (the CLI resolves --add-dir against the current directory)');
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw refuse('it does not exist or is not a directory');
    const real = realOrNull(dir);
    if (real === null) throw refuse('its real path cannot be read');
    const holding = hidden.holding(real);
    if (holding)
      throw refuse(`${real} is hidden from the model (${holding.listed}: a credential store or bhrain's home), so it is never writable`);
    const trusted = findProtected('/', real);
    if (trusted)
      throw refuse(`${real} is, or lies in, a protected path (${trusted.path}: ${trusted.trustedBy}), which no run may make writable`);
    const onPath = pathDirs.find((entry) => isUnder(real, entry) || isUnder(real, realOrNull(entry) ?? entry));
    if (onPath)
      throw refuse(
        `it holds ${onPath}, a directory on PATH: a command could replace a program that bhrain or you run outside the sandbox. Add a directory that holds none, or take it off PATH for this run`,
      );
    return real;
  });
};

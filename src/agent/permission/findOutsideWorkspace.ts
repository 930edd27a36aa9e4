import { statSync } from 'node:fs';
import { resolve } from 'node:path';

import { findProtected } from '../../sandbox/protectedPaths.js';
import { isUnder } from '../../core/paths/isUnder.js';
import { resolveRealPath } from './resolveRealPath.js';

/** .what = a path a call writes (as the tool's paths() named it), where the session works, and the directories it may
 *         change besides (BhrainContext.addDirs: real paths, resolveAddDirs) */
interface WrittenPath {
  path: string;
  cwd: string;
  addDirs?: readonly string[];
}

/** .what = the real paths of the roots a session may change: its working directory's, then each added directory */
export const writableRootsOf = (input: { cwd: string; addDirs?: readonly string[] }): string[] => [
  resolveRealPath(resolve(input.cwd)),
  ...(input.addDirs ?? []),
];

/**
 * .what = the protected entry a real path is, or lies in, judged from every root that holds it; null when none does
 * .why = an added directory is a workspace of its own: what later programs trust at its top (a `.bashrc` of a home
 *        directory) is protected as at the working directory's; the strictest reading wins where roots nest
 */
export const findProtectedInRoots = (roots: readonly string[], realPath: string) => {
  for (const root of roots) {
    const found = isUnder(root, realPath) ? findProtected(root, realPath) : null;
    if (found) return found;
  }
  return null;
};

/** .what = the real path a written path lands on, every symlink resolved (dangling ones too) */
export const findWriteTarget = (input: WrittenPath): string => resolveRealPath(resolve(input.cwd, input.path));

/**
 * .what = the real path a written path would change, when it lies outside the workspace (the working directory and
 *         the added directories); null when inside
 * .why = `../`, absolute paths and symlinks that point out (dangling ones too) all land outside; the guard layer asks
 *        before such a write
 */
export const findOutsideWorkspace = (input: WrittenPath): string | null => {
  const target = findWriteTarget(input);
  return writableRootsOf(input).some((root) => isUnder(root, target)) ? null : target;
};

/**
 * .what = the real path a written path would change, when it is one of the workspace's PROTECTED_PATHS, with who trusts it
 * .why = a program that runs outside the sandbox trusts it: the guard layer asks before such a write
 */
export const findProtectedTarget = (input: WrittenPath): { realPath: string; trustedBy: string } | null => {
  const target = findWriteTarget(input);
  const found = findProtectedInRoots(writableRootsOf(input), target);
  return found ? { realPath: target, trustedBy: found.trustedBy } : null;
};

/**
 * .what = the real path and link count of the existing file a written path would change, when it has other hard links;
 *         null otherwise
 * .why = a hard link (`ln ../outside/t hl`) aliases a file that may lie outside, and no path check can see where the other
 *        names are; the guard layer asks before such a write
 */
export const findHardLinkedTarget = (input: WrittenPath): { realPath: string; links: number } | null => {
  const target = findWriteTarget(input);
  try {
    const stats = statSync(target);
    return stats.isFile() && stats.nlink > 1 ? { realPath: target, links: stats.nlink } : null;
  } catch {
    // missing or unreadable: nothing is linked yet, and the tool reports the error itself
    return null;
  }
};

import { statSync } from 'node:fs';
import { resolve } from 'node:path';

import { findProtected } from '../../sandbox/protectedPaths.js';
import { isUnder } from '../../sandbox/resolveHiddenPaths.js';
import { resolveRealPath } from './resolveRealPath.js';

/** tools whose path input names a file they change */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['write', 'edit']);

/** .what = the real path a writing call names, every symlink resolved; null for a call that writes no named file */
export const findWriteTarget = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null =>
  WRITING_TOOLS.has(input.toolName) && typeof input.toolInput.path === 'string'
    ? resolveRealPath(resolve(input.cwd, input.toolInput.path))
    : null;

/**
 * .what = the real path a writing call would change, when it lies outside the workspace; null when inside
 * .why = `../`, absolute paths and symlinks that point out (dangling ones too) all land outside; the guard layer asks
 *        before such a write
 */
export const findOutsideWorkspace = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null => {
  const target = findWriteTarget(input);
  return target === null || isUnder(resolveRealPath(resolve(input.cwd)), target) ? null : target;
};

/**
 * .what = the real path a writing call would change, when it is one of the workspace's PROTECTED_PATHS, with who trusts it
 * .why = a program that runs outside the sandbox trusts it: the guard layer asks before such a write
 */
export const findProtectedTarget = (input: {
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string;
}): { realPath: string; trustedBy: string } | null => {
  const target = findWriteTarget(input);
  if (target === null) return null;
  const workspace = resolveRealPath(resolve(input.cwd));
  const found = isUnder(workspace, target) ? findProtected(workspace, target) : null;
  return found ? { realPath: target, trustedBy: found.trustedBy } : null;
};

/**
 * .what = the real path and link count of the existing file a writing call would change, when it has other hard links;
 *         null otherwise
 * .why = a hard link (`ln ../outside/t hl`) aliases a file that may lie outside, and no path check can see where the other
 *        names are; the guard layer asks before such a write
 */
export const findHardLinkedTarget = (input: {
  toolName: string;
  toolInput: Record<string, unknown>;
  cwd: string;
}): { realPath: string; links: number } | null => {
  const target = findWriteTarget(input);
  if (target === null) return null;
  try {
    const stats = statSync(target);
    return stats.isFile() && stats.nlink > 1 ? { realPath: target, links: stats.nlink } : null;
  } catch {
    // missing or unreadable: nothing is linked yet, and the tool reports the error itself
    return null;
  }
};

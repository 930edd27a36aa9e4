import { statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

import { resolveRealPath } from './resolveRealPath.js';

/** tools whose path input names a file they change */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['write', 'edit']);

/**
 * .what = paths inside a workspace whose contents git runs as code, unconfined, when the user next runs it
 * .why = changing them is changing what runs outside the workspace: write and edit ask first, as for a path outside
 */
export const GIT_EXECUTABLE_PATHS: readonly string[] = ['.git/hooks', '.git/config'];

/** .what = whether path is root or lies beneath it (both absolute, normalized) */
export const isWithin = (root: string, path: string): boolean => {
  const inside = relative(root, path);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
};

/** .what = whether a real path inside the workspace is, or lies in, one of its GIT_EXECUTABLE_PATHS */
export const isGitExecutable = (workspace: string, path: string): boolean =>
  GIT_EXECUTABLE_PATHS.some((gitPath) => isWithin(join(workspace, gitPath), path));

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
  return target === null || isWithin(resolveRealPath(resolve(input.cwd)), target) ? null : target;
};

/**
 * .what = the real path a writing call would change, when it is a git hook or git's config inside the workspace; null otherwise
 * .why = git runs them as code when the user next runs it, unconfined: the guard layer asks before such a write
 */
export const findGitExecutableTarget = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null => {
  const target = findWriteTarget(input);
  if (target === null) return null;
  const workspace = resolveRealPath(resolve(input.cwd));
  return isWithin(workspace, target) && isGitExecutable(workspace, target) ? target : null;
};

/**
 * .what = the real path and link count of the existing file a writing call would change, when it has other hard links;
 *         null otherwise
 * .why = a hard link (`ln ../outside/t hl`) aliases a file that may lie outside, and no path check can see where the other
 *        names are; the guard layer asks before such a write
 */
export const findHardLinkedTarget = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): { realPath: string; links: number } | null => {
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

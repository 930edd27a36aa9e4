import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** tools whose path input names a file they change */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['write', 'edit']);

/** .what = a path with every symlink resolved, as far as it exists (the rest is joined on as written) */
const realpathAsFarAsExists = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realpathAsFarAsExists(parent), basename(path));
  }
};

/**
 * .what = the real path a writing call would change, when it lies outside the workspace; null when inside
 * .why = `../`, absolute paths and symlinks that point out all land outside; the guard layer asks before such a write
 */
export const findOutsideWorkspace = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null => {
  if (!WRITING_TOOLS.has(input.toolName) || typeof input.toolInput.path !== 'string') return null;
  const workspace = realpathAsFarAsExists(resolve(input.cwd));
  const target = realpathAsFarAsExists(resolve(input.cwd, input.toolInput.path));
  const inside = relative(workspace, target);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)) ? null : target;
};

import { readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** tools whose path input names a file they change */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['write', 'edit']);

/** symlinks followed before giving up, as the kernel's ELOOP limit */
const MAX_SYMLINK_HOPS = 40;

/**
 * .what = where a write to an absolute path lands: every symlink resolved, dangling ones too, the missing rest joined on
 * .why = a dangling symlink inside the workspace (`link -> /outside/new.txt`) is followed by open(O_CREAT), so a write
 *        through it creates the target; realpath alone fails on it and would call the path inside
 */
const realpathAsFarAsExists = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    // walked component by component, like the kernel: each prefix is a real path, so '..' in a link target is dirname
    const pending = path.split('/').filter(Boolean);
    let current = '/';
    let hops = 0;
    while (pending.length) {
      const part = pending.shift()!;
      if (part === '.') continue;
      if (part === '..') {
        current = dirname(current);
        continue;
      }
      const next = join(current, part);
      let target: string | null = null;
      try {
        target = readlinkSync(next);
      } catch {
        // not a symlink, or missing: the write lands here as named
      }
      if (target !== null && hops++ < MAX_SYMLINK_HOPS) {
        if (isAbsolute(target)) current = '/';
        pending.unshift(...target.split('/').filter(Boolean));
        continue;
      }
      current = next;
    }
    return current;
  }
};

/**
 * .what = the real path a writing call would change, when it lies outside the workspace; null when inside
 * .why = `../`, absolute paths and symlinks that point out (dangling ones too) all land outside; the guard layer asks
 *        before such a write
 */
export const findOutsideWorkspace = (input: { toolName: string; toolInput: Record<string, unknown>; cwd: string }): string | null => {
  if (!WRITING_TOOLS.has(input.toolName) || typeof input.toolInput.path !== 'string') return null;
  const workspace = realpathAsFarAsExists(resolve(input.cwd));
  const target = realpathAsFarAsExists(resolve(input.cwd, input.toolInput.path));
  const inside = relative(workspace, target);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)) ? null : target;
};

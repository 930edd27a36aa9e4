import { readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/** symlinks followed before giving up, as the kernel's ELOOP limit */
const MAX_SYMLINK_HOPS = 40;

/**
 * .what = where an absolute path really lands: every symlink resolved, dangling ones too, the missing rest joined on
 * .why = a write through a symlink changes its target (`envlink -> .env`), and open(O_CREAT) follows a dangling one;
 *        realpath alone fails on a path that does not exist yet
 */
export const resolveRealPath = (path: string): string => {
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
        // not a symlink, or missing: the path lands here as named
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

import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * .what = creates a file's missing parent directories (mkdir -p); when that fails, throws the error that says why
 * .why = a recursive mkdir reports a parent that is a file as EEXIST, and a read-only file system as ENOENT, which
 *        would send the model after the wrong fix; creating the first missing directory alone surfaces the real cause
 */
export const makeParentDirs = async (filePath: string): Promise<void> => {
  const dir = dirname(filePath);
  try {
    await mkdir(dir, { recursive: true });
    return;
  } catch (error) {
    // the deepest ancestor that exists decides: a file there is ENOTDIR, else its first missing child shows the errno
    let child = dir;
    let ancestor = dir;
    let stats = await stat(ancestor).catch(() => null);
    while (!stats && dirname(ancestor) !== ancestor) {
      child = ancestor;
      ancestor = dirname(ancestor);
      stats = await stat(ancestor).catch(() => null);
    }
    if (stats && !stats.isDirectory())
      throw Object.assign(new Error(`ENOTDIR: ${ancestor} is a file, not a directory`), { code: 'ENOTDIR', path: ancestor });
    if (child !== ancestor) await mkdir(child);
    throw error;
  }
};

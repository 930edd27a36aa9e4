import { randomBytes } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { BadRequestError } from '../core/contract/errors.js';

/** .what = where --output-file writes, checked; write() puts the final result there whole, replacing what was there */
export interface OutputFile {
  path: string;
  write: (text: string) => Promise<void>;
}

/**
 * .what = the --output-file path, checked before the run: its directory exists, and the path is not a directory
 * .why = a path that cannot be written fails before any money is spent (exit 2), not after the answer; the file is
 *        written through a temp file and a rename, so a reader never sees half a result, nor the result of an older run
 */
export const resolveOutputFile = async (input: { path: string | undefined; cwd: string }): Promise<OutputFile | null> => {
  if (input.path === undefined) return null;
  const path = resolve(input.cwd, input.path);
  const [dir, existing] = await Promise.all([stat(dirname(path)).catch(() => null), stat(path).catch(() => null)]);
  if (!dir?.isDirectory())
    throw new BadRequestError(
      `--output-file ${input.path}: the directory ${dirname(path)} does not exist; create it, or give a path in one that does`,
    );
  if (existing?.isDirectory()) throw new BadRequestError(`--output-file ${input.path}: is a directory; give the path of a file`);
  return {
    path,
    write: async (text) => {
      const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await writeFile(temp, text);
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    },
  };
};

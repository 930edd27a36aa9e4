import { lstat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * .what = the root of the git repository a directory is in: the nearest directory, from it upwards, holding `.git`
 *         (a directory, or a file as in worktrees and submodules); null when there is none
 * .why = project instructions are read up to it, and the git line names it; found with the file system alone, so a
 *        directory outside any repository costs no git process
 */
export const findRepoRoot = async (input: { cwd: string }): Promise<string | null> => {
  for (let dir = resolve(input.cwd); ; dir = dirname(dir)) {
    if (
      await lstat(join(dir, '.git')).then(
        () => true,
        () => false,
      )
    )
      return dir;
    if (dirname(dir) === dir) return null;
  }
};

/** .what = the directories read, most general first: the working directory and each of its parents up to the repo root */
export const listProjectDirs = (cwd: string, root: string | null): string[] => {
  if (!root) return [cwd];
  const dirs: string[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === root || dirname(dir) === dir) return dirs;
  }
};

import { realpath } from 'node:fs/promises';

/** .what = a path as the file system resolves it (symlinks followed); a path that is gone stays as it was written */
const realPathOf = (path: string): Promise<string> => realpath(path).catch(() => path);

/**
 * .what = the runs recorded in a directory, in the order given: those whose cwd is that directory by real path (a
 *         symlink to it counts, a subdirectory does not); with the directory's real path
 * .why = --continue and `bhrain runs --here` mean the same runs by "here"
 */
export const selectRunsIn = async <Run extends { cwd: string }>(input: {
  runs: readonly Run[];
  dir: string;
}): Promise<{ dir: string; runs: Run[] }> => {
  const dir = await realPathOf(input.dir);
  // each directory resolved once: most runs share a few
  const resolved = new Map<string, Promise<string>>();
  const realOf = (cwd: string) => resolved.get(cwd) ?? resolved.set(cwd, realPathOf(cwd)).get(cwd)!;
  const reals = await Promise.all(input.runs.map((run) => realOf(run.cwd)));
  return { dir, runs: input.runs.filter((_, index) => reals[index] === dir) };
};

import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { displayPath } from './toolPaths.js';
import { findSimilarNames } from './findSimilarNames.js';

/**
 * .what = explains a path that does not exist: which part is missing, and similarly named entries beside it
 * .why = the model recovers from a wrong path in one step when it is shown the likely right one
 */
export const describeMissingPath = async (input: { path: string; cwd: string; kind: 'file' | 'path' }): Promise<string> => {
  // the deepest existing ancestor tells which component is wrong
  let missing = input.path;
  let parent = dirname(missing);
  while (
    parent !== missing &&
    !(await stat(parent)
      .then((stats) => stats.isDirectory())
      .catch(() => false))
  ) {
    missing = parent;
    parent = dirname(parent);
  }
  const shown = displayPath(input.path, input.cwd);
  const what = input.kind === 'file' ? 'File' : 'Path';
  const head =
    missing === input.path
      ? `${what} not found: ${shown}.`
      : `${what} not found: ${shown} (the directory ${displayPath(missing, input.cwd)} does not exist).`;
  const similar = await findSimilarNames(parent, basename(missing));
  const shownParent = displayPath(parent, input.cwd);
  const where = shownParent === '.' ? 'the working directory' : shownParent;
  if (similar.length === 0)
    return `${head} No similarly named entries in ${where}. Find it with glob { pattern: "**/${basename(input.path)}" }.`;
  const names = similar.map((name) => displayPath(join(parent, name), input.cwd)).join(', ');
  return `${head} Did you mean: ${names}?`;
};

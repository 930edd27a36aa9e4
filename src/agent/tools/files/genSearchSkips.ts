import { sep } from 'node:path';

import { loadGitIgnores, type GitIgnores } from './loadGitIgnores.js';

/** .what = what a glob or grep walk leaves out below its root (.git is left out always) */
export interface SearchSkips {
  /** git's rules, when what git ignores is skipped */
  gitIgnores?: GitIgnores;
  skipHiddenDirectories: boolean;
  skipNodeModules: boolean;
}

/** a segment that starts with '.' (not '.' or '..') and is followed by '/': the glob names a hidden directory */
const HIDDEN_DIRECTORY_SEGMENT = /(?:^|\/)\.(?!\.?\/)[^/]+\//;

/**
 * .what = decides what a search skips: what git ignores, hidden directories and node_modules, each unless the model
 *         opted in (include_ignored) or named it (the path is inside it, or the glob names it)
 * .why = glob and grep skip the same things, and both grep engines get the same answer, so their output is identical
 * .note = a root that git ignores was named explicitly: it is searched without ignore rules, as rg searches a path it
 *         is given
 */
export const genSearchSkips = async (input: { root: string; glob: string; includeIgnored: boolean }): Promise<SearchSkips> => {
  if (input.includeIgnored) return { skipHiddenDirectories: false, skipNodeModules: false };
  const gitIgnores = await loadGitIgnores({ root: input.root });
  const glob = input.glob.replace(/^!/, '');
  return {
    ...(gitIgnores.rootIgnored ? {} : { gitIgnores }),
    skipHiddenDirectories: !HIDDEN_DIRECTORY_SEGMENT.test(glob),
    skipNodeModules: !input.root.split(sep).includes('node_modules') && !glob.includes('node_modules'),
  };
};

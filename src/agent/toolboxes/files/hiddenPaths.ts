import { resolveRealPath } from '../../permission/resolveRealPath.js';
import type { BhrainToolContext } from '../../tool/defineTool.js';
import { resolveHiddenPaths, type HiddenEntry, type HiddenPaths, type ReadDenial } from '../../../sandbox/resolveHiddenPaths.js';
import { isUnder } from '../../../core/paths/isUnder.js';

/** .what = the paths hidden from a files tool in one call, given where and with what environment it runs */
export type HiddenPathsOf = (context: BhrainToolContext) => HiddenPaths;

/**
 * .what = the hidden paths of each call of a files toolbox: the credential stores, $BHRAIN_HOME and denyRead, less
 *         allowRead; the workspace and the session's spill dir stay readable
 * .why = resolved per call, so a store made since the last call is hidden from this one; the toolbox's own denial travels
 *        with its tools, whoever runs them (the session runs a tool directly, not through its box)
 */
export const genHiddenPathsOf =
  (denial: ReadDenial): HiddenPathsOf =>
  (context) =>
    resolveHiddenPaths(denial, { env: context.env, readable: [context.cwd, resolveRealPath(context.cwd), context.spillDir] });

/** .what = what a hidden entry is, in the model's terms */
const describeEntry = (entry: HiddenEntry): string =>
  entry.listed === '$BHRAIN_HOME'
    ? `$BHRAIN_HOME (${entry.path}), bhrain's own store of refs and run records`
    : `${entry.listed}${entry.listed === entry.path ? '' : ` (${entry.path})`}, which bhrain hides from the model as a store of credentials`;

/**
 * .what = the refusal a files tool answers with when a path it was given is, or lies in, a hidden path; null otherwise
 * .why = a credential must never reach the model: the path is judged as named and as it really lands (symlinks
 *        resolved, dangling ones too), before anything is read or listed there, so its content, its names and even
 *        whether it exists stay unknown
 */
export const refuseHiddenPath = (input: {
  path: string;
  shown: string;
  action: 'read' | 'search' | 'write' | 'edit';
  hidden: HiddenPaths;
}): string | null => {
  if (!input.hidden.entries.length) return null;
  const entry = input.hidden.holding(input.path) ?? input.hidden.holding(resolveRealPath(input.path));
  if (!entry) return null;
  const what = input.action === 'write' || input.action === 'edit' ? 'changed' : 'read';
  // the rule that would hand it back, written as the user would: from ~ where the entry was listed so
  const named = isUnder(entry.path, input.path) ? input.path : entry.path;
  const rule = entry.listed.startsWith('~') ? `${entry.listed}${named.slice(entry.path.length)}` : named;
  const how =
    entry.listed === '$BHRAIN_HOME'
      ? "Do the task without it: earlier runs are the user's to show (bhrain show)."
      : `Do the task without it; if it truly needs this file, tell the user, who can hand it back with a permission rule such as \`read(${rule})\`.`;
  return `Refused to ${input.action} ${input.shown}: it is in ${describeEntry(entry)}. Nothing was ${what}, and another way (bash, a symlink, a parent directory) finds it empty or absent too. ${how}`;
};

/**
 * .what = the hidden paths under a directory a walk starts from, named as the walk names them (below `root` as given,
 *         though the walk reaches them through root's real path)
 * .why = glob and grep skip them without reading them: a search over `..`, `/` or $HOME never enters ~/.ssh
 */
export const listHiddenUnder = (root: string, hidden: HiddenPaths): string[] => {
  if (!hidden.entries.length) return [];
  const rootReal = resolveRealPath(root);
  const under = new Set<string>();
  const inRoot = (base: string, path: string): string | null =>
    path === base
      ? null
      : path.startsWith(base === '/' ? '/' : `${base}/`)
        ? `${root === '/' ? '' : root}${path.slice(base === '/' ? 0 : base.length)}`
        : null;
  for (const entry of hidden.entries)
    for (const form of [entry.path, entry.realPath])
      for (const base of new Set([root, rootReal])) {
        const named = form === null ? null : inRoot(base, form);
        if (named !== null) under.add(named);
      }
  return [...under];
};

import { stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, parse, resolve } from 'node:path';

import picomatch from 'picomatch';

import { deferInput, makeTool } from '../../tool/makeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { formatCount } from './formatOutput.js';
import { comparePaths, displayPath, resolveToolPath } from './toolPaths.js';
import { GLOB_MAX_RESULTS } from './constants.js';
import { describeFsError, describeMissingPath } from './fsErrors.js';
import { compileGlob } from './globs.js';
import { listHiddenUnder, refuseHiddenPath, type HiddenPathsOf } from './hiddenPaths.js';
import { describeFileKind } from './readBoundedFile.js';
import { genSearchSkips, WALK_MAX_ENTRIES, WALK_MAX_MS, walkFiles, type WalkStop } from './walkFiles.js';

/** .what = glob's input: the pattern, where to start, and whether to list what git ignores */
export const globInput = deferInput(
  {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        description: 'The glob to match file paths against, relative to path, e.g. "**/*.ts" or "src/**/*.{ts,tsx}".',
      },
      path: {
        type: 'string',
        description: 'The directory to search under (default: the working directory).',
      },
      include_ignored: {
        description: 'Also list files git ignores, hidden directories and node_modules (default: false). .git is always skipped.',
        type: 'boolean',
      },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  async () => (await import('../toolInputs.js')).globZodInput(),
);

/**
 * .what = a pattern split into the literal directory it starts in and the glob left to match there
 * .why = 'src/archs/**' starts walking in src/archs instead of reading the whole tree and discarding it; a plain path
 *        ('src/a.ts') is its directory and the name to match there
 */
const splitLiteralRoot = (base: string, pattern: string): { root: string; glob: string } => {
  // an absolute pattern carries its own root
  const from = isAbsolute(pattern) ? parse(pattern).root : base;
  const relative = isAbsolute(pattern) ? pattern.slice(parse(pattern).root.length) : pattern;
  const scanned = picomatch.scan(relative);
  if (scanned.isGlob) return { root: resolve(from, scanned.base), glob: scanned.glob };
  const literal = relative.replace(/\/+$/, '');
  return { root: resolve(from, dirname(literal)), glob: basename(literal) };
};

/** .what = the notice of a walk that ran out of budget: how far it got, and how to narrow it */
const describeWalkStop = (stop: WalkStop, budget: { maxEntries: number; timeoutMs: number }) =>
  `The search stopped after ${formatCount(stop.entries)} directory entries and ${(stop.elapsedMs / 1000).toFixed(1)} s ` +
  `(its budget is ${formatCount(budget.maxEntries)} entries or ${budget.timeoutMs / 1000} s), so it is incomplete. Narrow the path or the pattern.`;

/**
 * .what = generates the glob tool: files and links under a directory whose relative paths match a glob, sorted and capped
 * .why = the model's way to find files by name, without a shell, with pruning, links listed but never entered, a cap,
 *        and a walk budget, so no tree can make it run for ever
 * .note = the budget defaults to WALK_MAX_ENTRIES and WALK_MAX_MS; tests pass small ones to reach it quickly
 */
export const genGlobTool = (options: { hidden: HiddenPathsOf; maxEntries?: number; timeoutMs?: number }) =>
  makeTool({
    name: 'glob',
    description: loadToolDescription(new URL('./glob.txt', import.meta.url)),
    input: globInput,
    effect: 'read',
    paths: (input) => [{ path: input.path || '.', access: 'read' }],
    execute: async (input, context) => {
      const budget = { maxEntries: options.maxEntries ?? WALK_MAX_ENTRIES, timeoutMs: options.timeoutMs ?? WALK_MAX_MS };
      const { pattern, path } = input;
      const searched = resolveToolPath(path === undefined || path === '' ? '.' : path, context.cwd);
      const shown = displayPath(searched, context.cwd);
      const hidden = options.hidden(context);
      const refusal = refuseHiddenPath({ path: searched, shown, action: 'search', hidden });
      if (refusal) return { success: false, output: refusal };

      const stats = await stat(searched).catch((error: unknown) => error as NodeJS.ErrnoException);
      if (stats instanceof Error) {
        if (stats.code === 'ENOENT' || stats.code === 'ENOTDIR')
          return { success: false, output: await describeMissingPath({ path: searched, cwd: context.cwd, kind: 'path' }) };
        return { success: false, output: describeFsError({ error: stats, action: 'search', path: shown }) };
      }
      if (!stats.isDirectory())
        return {
          success: false,
          output: stats.isFile()
            ? `${shown} is a file, not a directory: glob searches under a directory. Use read to see the file, or pass its directory as path.`
            : `${shown} is ${describeFileKind(stats)}, not a directory: glob searches under a directory. Pass a directory as path.`,
        };

      const includeIgnored = input.include_ignored ?? false;
      const { root, glob } = splitLiteralRoot(searched, pattern);
      // an absolute pattern, or one that climbs with '..', starts its walk elsewhere: judged again there
      const rootRefusal =
        root === searched ? null : refuseHiddenPath({ path: root, shown: displayPath(root, context.cwd), action: 'search', hidden });
      if (rootRefusal) return { success: false, output: rootRefusal };
      const rootIsDirectory = await stat(root)
        .then((rootStats) => rootStats.isDirectory())
        .catch(() => false);
      const compiled = compileGlob(glob);
      const walk = rootIsDirectory
        ? await walkFiles({
            root,
            ...(await genSearchSkips({ root, glob, includeIgnored })),
            hidden: listHiddenUnder(root, hidden),
            select: (relativePath, isDirectory) =>
              (isDirectory ? compiled.couldContain(relativePath) : compiled.matches(relativePath)) ? undefined : 'exclude',
            maxEntries: budget.maxEntries,
            deadline: Date.now() + budget.timeoutMs,
            signal: context.signal,
          })
        : { files: [] };
      const partial = 'stop' in walk && walk.stop ? describeWalkStop(walk.stop, budget) : undefined;

      if (walk.files.length === 0) {
        const anyDepth =
          !pattern.includes('/') && !pattern.startsWith('**')
            ? ` The pattern has no "/", so it matches only files directly in ${shown === '.' ? 'the working directory' : shown}; use "**/${pattern}" to match at any depth.`
            : '';
        const skipped = includeIgnored
          ? '(.git is skipped.)'
          : '(Files git ignores, hidden directories and node_modules are skipped unless the path or pattern names them; include_ignored: true lists them. .git is always skipped.)';
        return {
          success: true,
          output: `No files matched "${pattern}" under ${shown === '.' ? 'the working directory' : shown}.${anyDepth} ${skipped}${partial ? ` ${partial}` : ''}`,
        };
      }
      // every file is under root: shown as root's display path and the part below it, sorted by that part
      const shownRoot = displayPath(root, context.cwd);
      const below = (root.endsWith('/') ? root : `${root}/`).length;
      const paths = walk.files.map((file) => file.slice(below)).sort(comparePaths);
      const shownPaths = paths
        .slice(0, GLOB_MAX_RESULTS)
        .map((file) => (shownRoot === '.' ? file : `${shownRoot === '/' ? '' : shownRoot}/${file}`));
      const notice =
        paths.length > shownPaths.length
          ? `\n\n[Showing ${formatCount(shownPaths.length)} of ${formatCount(paths.length)} matching files; ${formatCount(paths.length - shownPaths.length)} more matched. Narrow the search: a more specific pattern (e.g. "src/**/*.test.ts") or a subdirectory as path.]`
          : '';
      return { success: true, output: shownPaths.join('\n') + notice + (partial ? `\n\n[${partial}]` : '') };
    },
  });

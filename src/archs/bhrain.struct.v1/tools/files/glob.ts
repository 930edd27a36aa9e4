import { stat } from 'node:fs/promises';
import { isAbsolute, parse, resolve } from 'node:path';

import type { BrainToolDefinition } from '../../../../contract/BrainMessage.js';
import { loadToolDescription } from '../loadToolDescription.js';
import { comparePaths } from './comparePaths.js';
import { compileGlob } from './compileGlob.js';
import { GLOB_MAX_RESULTS } from './constants.js';
import { describeFsError } from './describeFsError.js';
import { describeMissingPath } from './describeMissingPath.js';
import { displayPath } from './displayPath.js';
import { expandBraces } from './expandBraces.js';
import type { FilesTool } from './FilesTool.js';
import { formatCount } from './formatCount.js';
import { isInsideNodeModules } from './isInsideNodeModules.js';
import { readToolInput } from './readToolInput.js';
import { resolveToolPath } from './resolveToolPath.js';
import { splitGlobSegments } from './splitGlobSegments.js';
import { WALK_MAX_ENTRIES, WALK_MAX_MS, walkTree, type WalkedEntry } from './walkTree.js';

const definition: BrainToolDefinition = {
  name: 'glob',
  description: loadToolDescription(new URL('./glob.txt', import.meta.url)),
  inputSchema: {
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
    },
    required: ['pattern'],
    additionalProperties: false,
  },
};

/** a segment with any of these is a pattern, not a literal directory name */
const GLOB_META = /[*?[\\{]/;

/**
 * .what = splits each brace alternative into the literal directory it starts in and the pattern left to match there
 * .why = 'src/archs/**' starts walking in src/archs instead of reading the whole tree and discarding it
 */
const groupByLiteralRoot = (base: string, pattern: string): Map<string, string[]> => {
  const groups = new Map<string, string[]>();
  for (const expanded of expandBraces(pattern)) {
    const segments = splitGlobSegments(expanded);
    let literal = 0;
    // the last segment names files, so it never becomes part of the root
    while (literal < segments.length - 1 && !GLOB_META.test(segments[literal])) literal++;
    const root = resolve(base, ...segments.slice(0, literal));
    const rest = segments.slice(literal).join('/');
    groups.set(root, [...(groups.get(root) ?? []), rest]);
  }
  return groups;
};

/** .what = the notice of a walk that ran out of budget: how far it got, and how to narrow it */
const describeWalkStop = (stop: Extract<WalkedEntry, { kind: 'stopped' }>, budget: { maxEntries: number; timeoutMs: number }) =>
  `The search stopped after ${formatCount(stop.entries)} directory entries and ${(stop.elapsedMs / 1000).toFixed(1)} s ` +
  `(its budget is ${formatCount(budget.maxEntries)} entries or ${budget.timeoutMs / 1000} s), so it is incomplete. Narrow the path or the pattern.`;

/**
 * .what = generates the glob tool: files and links under a directory whose relative paths match a glob, sorted and capped
 * .why = the model's way to find files by name, without a shell, with pruning, links listed but never entered, a cap,
 *        and a walk budget, so no tree can make it run for ever
 * .note = the budget defaults to WALK_MAX_ENTRIES and WALK_MAX_MS; tests pass small ones to reach it quickly
 */
export const genGlobTool = (options: { maxEntries?: number; timeoutMs?: number } = {}): FilesTool => ({
  definition,
  execute: async (input, context) => {
    const budget = { maxEntries: options.maxEntries ?? WALK_MAX_ENTRIES, timeoutMs: options.timeoutMs ?? WALK_MAX_MS };
    const pattern = readToolInput.string(input, 'pattern', { nonEmpty: true });
    const path = readToolInput.optionalString(input, 'path');
    const searched = resolveToolPath(path === undefined || path === '' ? '.' : path, context.cwd);
    const shown = displayPath(searched, context.cwd);

    const stats = await stat(searched).catch((error: unknown) => error as NodeJS.ErrnoException);
    if (stats instanceof Error) {
      if (stats.code === 'ENOENT' || stats.code === 'ENOTDIR')
        return { success: false, output: await describeMissingPath({ path: searched, cwd: context.cwd, kind: 'path' }) };
      return { success: false, output: describeFsError({ error: stats, action: 'search', path: shown }) };
    }
    if (!stats.isDirectory())
      return {
        success: false,
        output: `${shown} is a file, not a directory: glob searches under a directory. Use read to see the file, or pass its directory as path.`,
      };

    // an absolute pattern carries its own root
    const base = isAbsolute(pattern) ? parse(pattern).root : searched;
    const relativePattern = isAbsolute(pattern) ? pattern.slice(parse(pattern).root.length) : pattern;
    const found = new Set<string>();
    const deadline = Date.now() + budget.timeoutMs;
    let stop: Extract<WalkedEntry, { kind: 'stopped' }> | undefined;
    for (const [root, patterns] of groupByLiteralRoot(base, relativePattern)) {
      if (stop) break;
      const rootIsDirectory = await stat(root).then((rootStats) => rootStats.isDirectory()).catch(() => false);
      if (!rootIsDirectory) continue;
      const globs = patterns.map(compileGlob);
      const walk = walkTree({
        root,
        skipNodeModules: !isInsideNodeModules(root) && !patterns.some((rest) => rest.includes('node_modules')),
        enterDirectory: (relativeDirectory) => globs.some((glob) => glob.couldContain(relativeDirectory)),
        maxEntries: budget.maxEntries,
        deadline,
        signal: context.signal,
      });
      for await (const entry of walk) {
        if (entry.kind === 'stopped') stop = entry;
        // a link is listed like a file when its own path matches; what it points to is never walked
        else if (globs.some((glob) => glob.matches(entry.relativePath))) found.add(entry.absolutePath);
      }
    }
    const partial = stop ? describeWalkStop(stop, budget) : undefined;

    if (found.size === 0) {
      const anyDepth =
        !relativePattern.includes('/') && !relativePattern.startsWith('**')
          ? ` The pattern has no "/", so it matches only files directly in ${shown === '.' ? 'the working directory' : shown}; use "**/${relativePattern}" to match at any depth.`
          : '';
      return {
        success: true,
        output: `No files matched "${pattern}" under ${shown === '.' ? 'the working directory' : shown}.${anyDepth} (.git is skipped; node_modules is skipped unless the path or pattern names it.)${partial ? ` ${partial}` : ''}`,
      };
    }
    const paths = [...found].map((absolutePath) => displayPath(absolutePath, context.cwd)).sort(comparePaths);
    const shownPaths = paths.slice(0, GLOB_MAX_RESULTS);
    const notice =
      paths.length > shownPaths.length
        ? `\n\n[Showing ${formatCount(shownPaths.length)} of ${formatCount(paths.length)} matching files; ${formatCount(paths.length - shownPaths.length)} more matched. Narrow the search: a more specific pattern (e.g. "src/**/*.test.ts") or a subdirectory as path.]`
        : '';
    return { success: true, output: shownPaths.join('\n') + notice + (partial ? `\n\n[${partial}]` : '') };
  },
});

/** .what = the glob tool with its default walk budget */
export const globTool: FilesTool = genGlobTool();

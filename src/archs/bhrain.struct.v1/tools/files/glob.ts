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
import { walkTree } from './walkTree.js';

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

/**
 * .what = the glob tool: files under a directory whose relative paths match a glob, sorted and capped
 * .why = the model's way to find files by name, without a shell and with pruning, loop-safe symlinks and a cap
 */
export const globTool: FilesTool = {
  definition,
  execute: async (input, context) => {
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
    for (const [root, patterns] of groupByLiteralRoot(base, relativePattern)) {
      const rootIsDirectory = await stat(root).then((rootStats) => rootStats.isDirectory()).catch(() => false);
      if (!rootIsDirectory) continue;
      const globs = patterns.map(compileGlob);
      const walk = walkTree({
        root,
        skipNodeModules: !isInsideNodeModules(root) && !patterns.some((rest) => rest.includes('node_modules')),
        enterDirectory: (relativeDirectory) => globs.some((glob) => glob.couldContain(relativeDirectory)),
        signal: context.signal,
      });
      for await (const file of walk)
        if (globs.some((glob) => glob.matches(file.relativePath))) found.add(file.absolutePath);
    }

    if (found.size === 0) {
      const anyDepth =
        !relativePattern.includes('/') && !relativePattern.startsWith('**')
          ? ` The pattern has no "/", so it matches only files directly in ${shown === '.' ? 'the working directory' : shown}; use "**/${relativePattern}" to match at any depth.`
          : '';
      return {
        success: true,
        output: `No files matched "${pattern}" under ${shown === '.' ? 'the working directory' : shown}.${anyDepth} (.git is skipped; node_modules is skipped unless the path or pattern names it.)`,
      };
    }
    const paths = [...found].map((absolutePath) => displayPath(absolutePath, context.cwd)).sort(comparePaths);
    const shownPaths = paths.slice(0, GLOB_MAX_RESULTS);
    const notice =
      paths.length > shownPaths.length
        ? `\n\n[Showing ${formatCount(shownPaths.length)} of ${formatCount(paths.length)} matching files; ${formatCount(paths.length - shownPaths.length)} more matched. Narrow the search: a more specific pattern (e.g. "src/**/*.test.ts") or a subdirectory as path.]`
        : '';
    return { success: true, output: shownPaths.join('\n') + notice };
  },
};

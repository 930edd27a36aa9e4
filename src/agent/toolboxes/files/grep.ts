import { stat } from 'node:fs/promises';

import { deferInput, makeTool } from '../../tool/makeTool.js';
import { loadToolDescription } from '../../tool/loadToolDescription.js';
import { formatBytes, formatCount } from './formatOutput.js';
import { comparePaths, displayPath, resolveToolPath } from './toolPaths.js';
import { GREP_MAX_FILE_BYTES, GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES, GREP_TIMEOUT_MS } from './constants.js';
import { describeFsError, describeMissingPath } from './fsErrors.js';
import type { GrepSearchInput, GrepSearchResult } from './GrepSearch.js';
import { grepWithBuiltin } from './grepWithBuiltin.js';
import { findRipgrep, grepWithRipgrep } from './grepWithRipgrep.js';
import { listHiddenUnder, refuseHiddenPath, type HiddenPathsOf } from './hiddenPaths.js';
import { describeFileKind, readBoundedFile } from './readBoundedFile.js';
import { genSearchSkips, WALK_MAX_ENTRIES } from './walkFiles.js';

/** .what = grep's input: the regex, where to search, which files, and whether to search what git ignores */
export const grepInput = deferInput(
  {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        description: 'The regular expression to search for, e.g. "function\\s+load\\w*".',
      },
      path: {
        type: 'string',
        description: 'The file or directory to search (default: the working directory).',
      },
      glob: {
        type: 'string',
        description: 'Only search files matching this glob, e.g. "*.ts", "src/**/*.{ts,tsx}", or "!*.test.ts" to exclude.',
      },
      include_ignored: {
        description: 'Also search files git ignores, hidden directories and node_modules (default: false). .git is always skipped.',
        type: 'boolean',
      },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  async () => (await import('../toolInputs.js')).grepZodInput(),
);

/** .what = which engine grep uses: rg when on PATH (auto), or one forced for tests and benchmarks */
type GrepEngine = 'auto' | 'rg' | 'builtin';

/** .what = runs the chosen engine; a forced rg that is not installed is a failure, not a silent fallback */
const search = async (engine: GrepEngine, input: GrepSearchInput, workspace: string): Promise<GrepSearchResult> => {
  if (engine === 'builtin') return grepWithBuiltin(input);
  const ripgrep = await findRipgrep(workspace);
  if (ripgrep) return grepWithRipgrep(input, { path: ripgrep, workspace });
  if (engine === 'rg')
    return { kind: 'failed', message: "grepEngine is 'rg', but ripgrep (rg) was not found on PATH. Install it, or use grepEngine 'auto'." };
  return grepWithBuiltin(input);
};

/** .what = a matched line cut like the tool promises; both engines pass through here, so the marker is the same */
const cutLine = (text: string): string => {
  if (text.length <= GREP_MAX_LINE_CHARS) return text;
  let kept = text.slice(0, GREP_MAX_LINE_CHARS);
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  return `${kept}… [line cut at ${GREP_MAX_LINE_CHARS} chars]`;
};

/**
 * .what = why grep gave a file named as its path no match without searching it: binary, more than GREP_MAX_FILE_BYTES
 *         (as read: a /proc file's stat says 0), or not a regular file (swapped since); null when it was searched
 * .why = "No matches" alone would tell the model the file was looked at; asked only when there were none
 */
const whyFileUnsearched = async (path: string, shown: string, signal?: AbortSignal): Promise<string | null> => {
  const read = await readBoundedFile({ path, maxBytes: GREP_MAX_FILE_BYTES, sniffBinary: true, signal }).catch(() => null);
  if (read?.kind === 'binary') return 'it was not searched: it is a binary file (NUL bytes in its first 8 KB)';
  if (read?.kind === 'not-regular') return `it was not searched: it is ${read.what}`;
  if (read?.kind === 'read' && read.more)
    return `it was not searched: it holds more than ${formatBytes(GREP_MAX_FILE_BYTES)}${read.stats.size < GREP_MAX_FILE_BYTES ? ` (though its size says ${formatBytes(read.stats.size)}, as /proc and /sys files do)` : ''}, grep's limit. Use bash on a part of it (e.g. \`head -c 10000000 ${shown} | grep -n PATTERN\`)`;
  return null;
};

/** .what = why a runaway regex stopped, and what to do about it */
const describeStall = (stalledOn: string, timeoutMs: number, cwd: string): string =>
  `The regex was still running on ${displayPath(stalledOn, cwd)} when the search stopped after ${timeoutMs / 1000} s: it took too long. ` +
  'Nested quantifiers such as (a+)+ or (.*)* can take exponential time on some lines; simplify the pattern, ' +
  'or install ripgrep (rg), whose regex engine runs in linear time and which grep then uses.';

/**
 * .what = generates the grep tool over an engine: regex search of file contents, `path:line:text`, sorted and capped
 * .why = one output format whatever the engine, so the model, tests and benchmarks see the same thing from rg or the built-in
 * .note = timeoutMs and maxWalkEntries default to the tool's budget; tests pass small ones to reach it quickly
 */
export const genGrepTool = (options: { engine: GrepEngine; hidden: HiddenPathsOf; timeoutMs?: number; maxWalkEntries?: number }) =>
  makeTool({
    name: 'grep',
    description: loadToolDescription(new URL('./grep.txt', import.meta.url)),
    input: grepInput,
    effect: 'read',
    paths: (input) => [{ path: input.path || '.', access: 'read' }],
    execute: async (input, context) => {
      const timeoutMs = options.timeoutMs ?? GREP_TIMEOUT_MS;
      const maxWalkEntries = options.maxWalkEntries ?? WALK_MAX_ENTRIES;
      const { pattern, path } = input;
      const glob = input.glob || undefined;
      const includeIgnored = input.include_ignored ?? false;
      const root = resolveToolPath(path === undefined || path === '' ? '.' : path, context.cwd);
      const shown = displayPath(root, context.cwd);
      const hidden = options.hidden(context);
      const refusal = refuseHiddenPath({ path: root, shown, action: 'search', hidden });
      if (refusal) return { success: false, output: refusal };

      const stats = await stat(root).catch((error: unknown) => error as NodeJS.ErrnoException);
      if (stats instanceof Error) {
        if (stats.code === 'ENOENT' || stats.code === 'ENOTDIR')
          return { success: false, output: await describeMissingPath({ path: root, cwd: context.cwd, kind: 'path' }) };
        return { success: false, output: describeFsError({ error: stats, action: 'search', path: shown }) };
      }
      if (!stats.isDirectory() && !stats.isFile())
        return {
          success: false,
          output: `${shown} is ${describeFileKind(stats)}, neither a regular file nor a directory, so it is not searched: reading one can block for ever or never end.`,
        };
      // a hard link to a hidden file is the same file under another name
      const linked = stats.isFile()
        ? hidden.entries.find((entry) => !entry.isDirectory && entry.inode === `${stats.dev}:${stats.ino}`)
        : undefined;
      if (linked)
        return {
          success: false,
          output:
            refuseHiddenPath({ path: linked.realPath ?? linked.path, shown, action: 'search', hidden }) ??
            `Refused to search ${shown}: it is a hidden file.`,
        };

      // a file named as the path is searched whatever git says of it, as rg does
      const skips = stats.isFile()
        ? { skipHiddenDirectories: false, skipNodeModules: false }
        : await genSearchSkips({ root, glob: glob ?? '', includeIgnored });
      const result = await search(
        options.engine,
        {
          root,
          rootIsFile: stats.isFile(),
          pattern,
          glob,
          ...skips,
          hidden: stats.isFile() ? [] : listHiddenUnder(root, hidden),
          maxMatches: GREP_MAX_MATCHES,
          timeoutMs,
          maxWalkEntries,
          signal: context.signal,
        },
        context.cwd,
      );
      if (result.kind === 'invalid-pattern')
        return {
          success: false,
          output: `Invalid regex ${JSON.stringify(pattern)}: ${result.message}\nFix the pattern (escape literal ( ) [ ] { } . * + ? | with a backslash) and retry.`,
        };
      if (result.kind === 'failed') return { success: false, output: result.message };

      const among = glob === undefined ? '' : ` among files matching "${glob}"`;
      const stall = result.stalledOn === undefined ? undefined : describeStall(result.stalledOn, timeoutMs, context.cwd);
      const walkBudget =
        result.walkStoppedAtEntries === undefined
          ? undefined
          : `The search stopped after ${formatCount(result.walkStoppedAtEntries)} directory entries (its budget), so it is incomplete. Narrow the path or add a glob.`;
      if (result.matches.length === 0) {
        const partial = stall
          ? ` ${stall}`
          : result.timedOut
            ? ` The search stopped after ${timeoutMs / 1000} s, so it may be incomplete.`
            : walkBudget
              ? ` ${walkBudget}`
              : '';
        const where = shown === '.' ? 'the working directory' : shown;
        const unsearched = stats.isFile() ? await whyFileUnsearched(root, shown, context.signal) : null;
        if (unsearched) return { success: true, output: `No matches for ${JSON.stringify(pattern)} in ${where}: ${unsearched}.` };
        // a runaway regex is a failure the model must act on, not an answer
        return { success: !stall, output: `No matches for ${JSON.stringify(pattern)} in ${where}${among}.${partial}` };
      }
      const lines = result.matches
        .map((match) => ({ ...match, shownPath: displayPath(match.path, context.cwd) }))
        .sort((a, b) => comparePaths(a.shownPath, b.shownPath) || a.line - b.line)
        .map((match) => `${match.shownPath}:${match.line}:${cutLine(match.text)}`);
      const notices: string[] = [];
      if (result.more)
        notices.push(
          `[Showing the first ${formatCount(result.matches.length)} matches; there are more. Narrow the search: a more specific pattern, a subdirectory as path, or a glob such as "*.ts".]`,
        );
      if (stall) notices.push(`[${stall} These results are partial.]`);
      else if (result.timedOut)
        notices.push(`[The search stopped after ${timeoutMs / 1000} s, so these results are partial. Narrow the path or add a glob.]`);
      if (walkBudget) notices.push(`[${walkBudget}]`);
      return { success: !stall, output: [lines.join('\n'), ...notices].join('\n\n') };
    },
  });

import { basename, dirname, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

import { findHostProgram } from '../../../process/findHostProgram.js';
import { genHostProgramEnv } from '../../../process/genHostProgramEnv.js';
import { spawnGroup, type GroupEnd } from '../../../process/spawnGroup.js';
import { comparePaths } from './toolPaths.js';
import { GREP_MAX_LINE_CHARS, GREP_RG_MAX_BUFFER_BYTES, GREP_RG_MAX_DATA_BYTES } from './constants.js';
import type { GrepMatch, GrepSearchInput, GrepSearchResult } from './GrepSearch.js';

/** whether each rg found ran, asked once per process and path */
const ran = new Map<string, Promise<boolean>>();

/**
 * .what = the ripgrep (rg) grep runs: found on PATH outside the workspace, and known to run (checked once per process
 *         and path, then cached); null when there is none
 * .why = grep prefers rg when it is there, without paying a process spawn per call to find out; rg runs outside the
 *        sandbox, so it must not be one the model planted (node_modules/.bin, first on PATH under `npm run`)
 */
export const findRipgrep = async (workspace?: string): Promise<string | null> => {
  const path = findHostProgram({ name: 'rg', path: process.env.PATH, untrusted: workspace ? [workspace] : [] });
  if (!path) return null;
  let check = ran.get(path);
  if (!check) {
    check = spawnGroup({
      command: path,
      args: ['--version'],
      // any directory that is there: rg --version reads none
      cwd: '/',
      env: {},
      stdio: ['ignore', 'ignore', 'ignore'],
      timeoutMs: 5_000,
      killGraceMs: 0,
    }).ended.then((end) => end.exitCode === 0);
    ran.set(path, check);
  }
  return (await check) ? path : null;
};

/** .what = whether ripgrep (rg) runs from PATH */
export const hasRipgrep = async (): Promise<boolean> => (await findRipgrep()) !== null;

/** how many times the cap the parallel search may collect, to keep the first matches in path order itself */
const COLLECT_FACTOR = 10;

/** how much of rg's stderr is kept: enough for its fatal message among per-file ones */
const RG_STDERR_MAX_BYTES = 64 * 1024;

/** rg stops at SIGTERM; SIGKILL after this long is for one that is stuck in a read */
const RG_KILL_GRACE_MS = 1_000;

/** per-file problems (unreadable file, vanished file) that ripgrep reports but that do not fail the search */
const PER_FILE_ERROR = /permission denied|no such file|os error|file system loop/i;

/**
 * .what = grep through ripgrep: spawnGroup (never a shell; the pattern is one argument after -e), output read as it
 *         streams, and rg stopped once it has found more than it keeps
 * .why = rg is much faster on big trees; its flags make it pick the same files as the built-in engine
 *        (hidden files yes, .gitignore files as asked but no .ignore or .rgignore, .git always skipped, hidden
 *        directories and node_modules as asked, symbolic links below the root not followed: no --follow, so a DAG
 *        of linked directories cannot multiply the paths). rg runs outside the sandbox, as the user's own program on the
 *        workspace: with genHostProgramEnv's environment (no secret), and its heap capped (GREP_RG_MAX_DATA_BYTES)
 *        through the shell's ulimit, since an ignore file it reads may be a link to /dev/zero
 * .note = rg searches in parallel and unsorted; the tool shows the first matches in path order (comparePaths, rg's
 *         --sort path order), so the matches kept at the cap are the ones the built-in engine keeps. A search with up to
 *         COLLECT_FACTOR times the cap is collected whole and sorted here; only a bigger one is searched again sorted by
 *         path, which rg does on one thread (on node_modules, 276 ms against 141 ms in parallel)
 */
export const grepWithRipgrep = async (input: GrepSearchInput, ripgrep: { path: string; workspace: string }): Promise<GrepSearchResult> => {
  const fast = await runRipgrep(input, { sorted: false, keep: input.maxMatches * COLLECT_FACTOR, ripgrep });
  if (fast.kind !== 'matches') return fast;
  if (fast.more && !fast.timedOut) return runRipgrep(input, { sorted: true, keep: input.maxMatches, ripgrep });
  // collected whole (or as far as the timeout let it): the first matches in path order
  const inOrder = fast.matches.sort((a, b) => comparePaths(a.path, b.path) || a.line - b.line);
  return { ...fast, matches: inOrder.slice(0, input.maxMatches), more: fast.more || inOrder.length > input.maxMatches };
};

/** .what = a path as a literal in one of rg's globs: its glob characters escaped */
const escapeGlob = (path: string): string => path.replace(/[\\*?[\]{}!]/g, '\\$&');

/** .what = rg's arguments for one search of the input, run in cwd on target */
const ripgrepArgs = (input: GrepSearchInput, { sorted, target }: { sorted: boolean; target: string }): string[] => [
  '--line-number',
  '--no-heading',
  '--color',
  'never',
  '--with-filename',
  '--null',
  '--no-config',
  // '$' matches before CRLF too, as in the built-in engine, which drops the CR before testing a line
  '--crlf',
  '--hidden',
  // git's ignore files (rg's own .ignore and .rgignore are not read by the built-in engine)
  ...(input.gitIgnores ? ['--no-ignore-dot'] : ['--no-ignore']),
  ...(sorted ? ['--sort', 'path'] : []),
  '--max-filesize',
  '10M',
  // a longer line is shown as a preview: enough bytes for the characters grep keeps
  '--max-columns',
  String(GREP_MAX_LINE_CHARS * 4),
  '--max-columns-preview',
  // among globs the last that matches decides: the model's glob first, so it can never reopen what is skipped always
  ...(input.glob === undefined ? [] : ['--glob', input.glob]),
  ...(input.skipNodeModules ? ['--glob', '!node_modules'] : []),
  ...(input.skipHiddenDirectories ? ['--glob', '!.*/'] : []),
  '--glob',
  '!.git',
  // the hidden paths, anchored at the searched directory: rg never enters or reads them
  ...input.hidden.flatMap((path) => ['--glob', `!/${escapeGlob(path.slice(input.root === '/' ? 1 : input.root.length + 1))}`]),
  '-e',
  input.pattern,
  '--',
  target,
];

/** .what = the search's result from how rg ended, when it was not stopped at the cap: its exit code and stderr */
const readRipgrepEnd = (end: GroupEnd, found: Extract<GrepSearchResult, { kind: 'matches' }>): GrepSearchResult => {
  if (end.spawnError?.includes('ENOENT')) return { kind: 'failed', message: 'ripgrep (rg) was not found on PATH.' };
  if (end.spawnError) return { kind: 'failed', message: `ripgrep failed to start: ${end.spawnError}` };
  if (end.timedOut) return { ...found, timedOut: true };
  // 0: matches; 1: nothing matched
  if (end.exitCode === 0 || end.exitCode === 1) return found;
  const fatal = `${end.stderr.head}${end.stderr.tail}`
    .split('\n')
    .filter((line) => line.trim() !== '' && !PER_FILE_ERROR.test(line))
    .join('\n');
  if (/regex/i.test(fatal)) return { kind: 'invalid-pattern', message: fatal };
  if (/memory allocation/i.test(fatal))
    return {
      kind: 'failed',
      message: `ripgrep stopped at its ${GREP_RG_MAX_DATA_BYTES / 1024 / 1024 / 1024} GB memory bound (${fatal}): something it read has no end, such as an ignore file that is a link to /dev/zero. Search a narrower path, or with include_ignored: true (ignore files unread).`,
    };
  if (found.matches.length > 0 || fatal === '') return found;
  return { kind: 'failed', message: `ripgrep failed: ${fatal}` };
};

/** .what = one ripgrep run, sorted by path or in rg's own parallel order, stopped once it has more than `keep` matches */
const runRipgrep = async (
  input: GrepSearchInput,
  { sorted, keep, ripgrep }: { sorted: boolean; keep: number; ripgrep: { path: string; workspace: string } },
): Promise<GrepSearchResult> => {
  // run inside the searched directory so an anchored glob ('src/*.ts') is relative to it, as in the built-in engine
  const cwd = input.rootIsFile ? dirname(input.root) : input.root;
  const group = spawnGroup({
    command: '/bin/sh',
    args: [
      '-c',
      `ulimit -d ${GREP_RG_MAX_DATA_BYTES / 1024} 2>/dev/null; exec "$0" "$@"`,
      ripgrep.path,
      ...ripgrepArgs(input, { sorted, target: input.rootIsFile ? basename(input.root) : '.' }),
    ],
    cwd,
    env: genHostProgramEnv({ env: process.env, untrusted: [ripgrep.workspace] }),
    capture: { stderr: { maxBytes: RG_STDERR_MAX_BYTES } },
    timeoutMs: input.timeoutMs,
    signal: input.signal,
    killGraceMs: RG_KILL_GRACE_MS,
  });

  const matches: GrepMatch[] = [];
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let readBytes = 0;
  // stopped: at the cap of matches, or past the bytes it may print (what was read is shown, the rest is more)
  let stopped: 'cap' | 'bytes' | null = null;
  const takeLine = (line: string) => {
    if (stopped || line === '') return;
    const nul = line.indexOf('\0');
    const colon = line.indexOf(':', nul + 1);
    if (nul === -1 || colon === -1) return;
    matches.push({
      path: resolve(cwd, line.slice(0, nul)),
      line: Number(line.slice(nul + 1, colon)),
      text: line.slice(colon + 1).replace(/\r$/, ''),
    });
    if (matches.length > keep) {
      stopped = 'cap';
      void group.stop();
    }
  };
  group.child.stdout?.on('data', (chunk: Buffer) => {
    if (stopped) return;
    readBytes += chunk.length;
    if (readBytes > GREP_RG_MAX_BUFFER_BYTES) {
      stopped = 'bytes';
      return void group.stop();
    }
    const lines = (pending + decoder.write(chunk)).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) takeLine(line);
  });

  const end = await group.ended;
  if (input.signal?.aborted) throw input.signal.reason;
  takeLine(pending + decoder.end());
  const found = { kind: 'matches' as const, matches: matches.slice(0, keep), more: matches.length > keep, timedOut: false };
  if (stopped === 'cap') return found;
  if (stopped === 'bytes') return { ...found, more: true };
  return readRipgrepEnd(end, found);
};

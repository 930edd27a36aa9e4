import { createHash } from 'node:crypto';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, sep } from 'node:path';

import { parseGitConfig } from '../../agent/git/parseGitConfig.js';
import { findGitDirs, readGitCredentials, type GitDirs } from '../../agent/git/readGitCredentials.js';
import { runHardenedGit } from '../../agent/git/runHardenedGit.js';
import { describeFileKind, readBoundedFile } from '../../agent/toolboxes/files/readBoundedFile.js';
import { isUnder } from '../../core/paths/isUnder.js';

/** .what = an index bit that keeps a tracked file's change out of `git status` and `git diff` */
export type HiddenBit = 'skip-worktree' | 'assume-unchanged';

/** .what = what hides a change from review at one moment: the index's bits, and the files that hide paths or diffs */
export interface HiddenFromReviewSnapshot {
  /** the index entries under cwd with a bit set, by path relative to cwd */
  bits: Map<string, HiddenBit[]>;
  /** each file that hides paths or diffs, by path (relative to cwd when inside it): its content's signature, '-' absent */
  files: Map<string, string>;
  /** why the index could not be read (git failed, or was not run); null when it was, or there is no repository */
  unread: string | null;
}

/** git ls-files prints a line per tracked path: past this, the index is not read */
const LS_FILES_MAX_BYTES = 64 * 1024 * 1024;

/** git ls-files may take this long (the audit's walk has 5 s) */
const LS_FILES_TIMEOUT_MS = 5_000;

/** a watched file is hashed up to this size; a bigger one is known by its size and times */
const SIGNATURE_MAX_BYTES = 4 * 1024 * 1024;

/** .what = a file's signature: its content's sha256, a link's target, another kind's name, or '-' when absent */
const signatureOf = async (path: string): Promise<string> => {
  const stats = await lstat(path).catch(() => null);
  if (!stats) return '-';
  if (stats.isSymbolicLink()) return `link:${await readlink(path).catch(() => '')}`;
  if (!stats.isFile()) return describeFileKind(stats);
  const read = await readBoundedFile({ path, maxBytes: SIGNATURE_MAX_BYTES, followLinks: false }).catch(() => null);
  if (read?.kind !== 'read' || read.more) return `stat:${stats.size}:${stats.mtimeMs}:${stats.ino}`;
  return `sha256:${createHash('sha256').update(read.bytes).digest('hex')}`;
};

/** .what = the bits `git ls-files -v -z` prints: S for skip-worktree, a lower-case tag for assume-unchanged */
const parseLsFiles = (stdout: string): Map<string, HiddenBit[]> => {
  const bits = new Map<string, HiddenBit[]>();
  for (const record of stdout.split('\0')) {
    if (record.length < 3) continue;
    const tag = record[0];
    const set: HiddenBit[] = [];
    if (tag === 'S' || tag === 's') set.push('skip-worktree');
    if (tag !== tag.toUpperCase()) set.push('assume-unchanged');
    if (set.length) bits.set(record.slice(2), set);
  }
  return bits;
};

/**
 * .what = the files git reads to hide paths or diffs from review: info/exclude and info/attributes (of the common dir,
 *         and of the git dir when a worktree's is its own), and every core.excludesFile and core.attributesFile any
 *         config file names, when it lies inside the workspace
 */
const listHidingFiles = async (cwd: string, dirs: GitDirs, env: Record<string, string | undefined>): Promise<string[]> => {
  const home = env.HOME || homedir();
  const paths = [...new Set([dirs.commonDir, dirs.gitDir])].flatMap((dir) => [
    join(dir, 'info', 'exclude'),
    join(dir, 'info', 'attributes'),
  ]);
  const workspace = [await realpath(cwd).catch(() => cwd), dirs.root];
  for (const file of readGitCredentials({ cwd }, { env }).files)
    for (const { key, value } of parseGitConfig(file.text))
      if ((key === 'core.excludesfile' || key === 'core.attributesfile') && value) {
        // as git reads them: `~/` from HOME, a relative path from the work tree's top
        const path = value.startsWith('~/') ? join(home, value.slice(2)) : isAbsolute(value) ? value : join(dirs.root, value);
        if (workspace.some((root) => isUnder(root, path))) paths.push(path);
      }
  return [...new Set(paths)];
};

/**
 * .what = what hides a change from `git status` and `git diff` in the repository around cwd, now: the index's
 *         skip-worktree and assume-unchanged bits (a hardened `git ls-files -v`), and the signature of each file that
 *         hides paths or diffs (listHidingFiles)
 * .why = the audit compares this at the run's start and end: a bit the run set, or a rule it added to info/exclude or
 *        info/attributes (`-diff`), is a change no reviewer of `git status` or `git diff` would see
 */
export const snapshotHiddenFromReview = async (
  input: { cwd: string },
  context: { env: Record<string, string | undefined> },
): Promise<HiddenFromReviewSnapshot> => {
  const dirs = findGitDirs(input.cwd);
  const files = new Map<string, string>();
  if (!dirs) return { bits: new Map(), files, unread: null };
  for (const path of await listHidingFiles(input.cwd, dirs, context.env)) {
    const shown = relative(input.cwd, path);
    files.set(shown.startsWith('..') || isAbsolute(shown) ? path : shown.split(sep).join('/'), await signatureOf(path));
  }
  const run = await runHardenedGit(
    { cwd: input.cwd, args: ['ls-files', '-v', '-z'], timeoutMs: LS_FILES_TIMEOUT_MS, maxStdoutBytes: LS_FILES_MAX_BYTES },
    { env: context.env },
  );
  if (!run.ran) return { bits: new Map(), files, unread: run.why };
  const { end } = run;
  const failed = end.spawnError
    ? end.spawnError
    : end.timedOut
      ? `git ls-files took longer than ${LS_FILES_TIMEOUT_MS} ms`
      : end.exitCode !== 0
        ? `git ls-files failed (${end.exitSignal ?? `exit ${end.exitCode}`}): ${end.stderr.head.split('\n')[0] ?? ''}`.trim()
        : end.stdout.droppedBytes > 0
          ? `git ls-files printed more than ${LS_FILES_MAX_BYTES} bytes`
          : null;
  return failed ? { bits: new Map(), files, unread: failed } : { bits: parseLsFiles(end.stdout.head), files, unread: null };
};

/** .what = an index entry whose bit hides a change: set during the run, or set before it on a file the run changed */
export interface AuditHiddenEntry {
  path: string;
  bits: HiddenBit[];
  setBy: 'run' | 'before';
}

/** .what = a file that hides paths or diffs, and how the run changed it */
export interface AuditHiddenFile {
  path: string;
  change: 'created' | 'changed' | 'deleted';
}

/**
 * .what = what the run hid from review, between two snapshots: each entry with a bit set at the end that was not set
 *         at the start, or that was and whose file the run changed or deleted (`touched`); each hiding file created,
 *         changed or deleted; sorted by path
 */
export const diffHiddenFromReview = (
  start: HiddenFromReviewSnapshot,
  end: HiddenFromReviewSnapshot,
  touched: ReadonlySet<string>,
): { index: AuditHiddenEntry[]; files: AuditHiddenFile[]; unread: string | null } => {
  const index: AuditHiddenEntry[] = [];
  for (const [path, bits] of end.bits) {
    const before = start.bits.get(path) ?? [];
    if (bits.some((bit) => !before.includes(bit))) index.push({ path, bits, setBy: 'run' });
    else if (touched.has(path)) index.push({ path, bits, setBy: 'before' });
  }
  const files: AuditHiddenFile[] = [];
  for (const path of new Set([...start.files.keys(), ...end.files.keys()])) {
    const [before, after] = [start.files.get(path) ?? '-', end.files.get(path) ?? '-'];
    if (before !== after) files.push({ path, change: before === '-' ? 'created' : after === '-' ? 'deleted' : 'changed' });
  }
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return { index: index.sort(byPath), files: files.sort(byPath), unread: start.unread ?? end.unread };
};

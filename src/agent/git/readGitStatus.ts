import { resolve } from 'node:path';

import { silentLog, type BrainLog } from '../../core/contract/BrainContext.js';
import type { GroupEnd } from '../../process/spawnGroup.js';
import { findRepoRoot } from './findRepoRoot.js';
import { runHardenedGit } from './runHardenedGit.js';

/** .what = how long the one git call may take before the git line is left out */
export const DEFAULT_GIT_STATUS_TIMEOUT_MS = 1_000;

/** git status prints a line per changed path: past this, the tree is too big to describe, and the git line is left out */
const GIT_STATUS_MAX_BYTES = 32 * 1024 * 1024;

/** .what = the state of the git repository a working directory is in: where, which branch, how dirty (counts only) */
export interface BhrainGitStatus {
  /** the repository root: the nearest directory holding .git */
  root: string;
  /** the current branch; null when HEAD is detached */
  branch: string | null;
  /** the commit HEAD points at, abbreviated; null before the first commit */
  commit: string | null;
  /** tracked paths with staged or unstaged changes (renames and copies included) */
  changed: number;
  /** paths with unresolved merge conflicts */
  conflicted: number;
  /** untracked paths not ignored (an untracked directory counts once, as git shows it) */
  untracked: number;
}

/** .what = the counts and branch of `git status --porcelain=v2 --branch` output */
const parsePorcelainV2 = (stdout: string, root: string): BhrainGitStatus => {
  const status: BhrainGitStatus = { root, branch: null, commit: null, changed: 0, conflicted: 0, untracked: 0 };
  for (const line of stdout.split('\n')) {
    if (line.startsWith('# branch.oid ')) {
      const oid = line.slice('# branch.oid '.length);
      status.commit = oid === '(initial)' ? null : oid.slice(0, 7);
    } else if (line.startsWith('# branch.head ')) {
      const head = line.slice('# branch.head '.length);
      status.branch = head === '(detached)' ? null : head;
    } else if (line.startsWith('1 ') || line.startsWith('2 ')) status.changed++;
    else if (line.startsWith('u ')) status.conflicted++;
    else if (line.startsWith('? ')) status.untracked++;
  }
  return status;
};

/**
 * .what = the git status of the working directory's repository, from one `git status --porcelain=v2 --branch` call;
 *         null outside a repository, and when git is absent, fails, is slower than timeoutMs, or is not run because
 *         the repository's config cannot be made harmless (a debug line says why)
 * .why = the system prompt states the repo root, the branch and how dirty the tree is, cheaply: no process at all outside
 *        a repository, never a file's name or content, and no lock taken (--no-optional-locks), so it never gets in the
 *        way of the user's own git commands. git runs hardened (runHardenedGit): it runs when every session opens, a
 *        subagent's too, so nothing a repository or a model plants may run through it
 * .note = submodules are not looked into (--ignore-submodules=all): git would run a status inside each, under the
 *         submodule's own config; a submodule's own changes and a moved submodule commit are not counted
 */
export const readGitStatus = async (
  input: { cwd: string; timeoutMs?: number },
  context: { env?: Record<string, string | undefined>; log?: BrainLog } = {},
): Promise<BhrainGitStatus | null> => {
  const log = context.log ?? silentLog;
  const cwd = resolve(input.cwd);
  const root = await findRepoRoot({ cwd });
  if (!root) {
    log.debug(`git status: ${cwd} is not in a git repository`);
    return null;
  }
  const timeoutMs = input.timeoutMs ?? DEFAULT_GIT_STATUS_TIMEOUT_MS;
  const run = await runHardenedGit(
    { cwd, args: ['status', '--porcelain=v2', '--branch', '--ignore-submodules=all'], timeoutMs, maxStdoutBytes: GIT_STATUS_MAX_BYTES },
    { env: context.env ?? process.env },
  );
  const why = run.ran ? whyGitFailed(run.end, timeoutMs) : run.why;
  if (why === null && run.ran) return parsePorcelainV2(run.end.stdout.head, root);
  log.debug(`git status skipped: ${why}`);
  return null;
};

/** .what = why a git status run gives no status, or null when it gave one (all of it) */
const whyGitFailed = (end: GroupEnd, timeoutMs: number): string | null => {
  if (end.spawnError) return end.spawnError;
  if (end.timedOut) return `git took longer than ${timeoutMs} ms`;
  if (end.exitCode !== 0)
    return `git status failed (${end.exitSignal ?? `exit ${end.exitCode}`}): ${end.stderr.head.split('\n')[0] ?? ''}`.trim();
  if (end.stdout.droppedBytes > 0) return `git status printed more than ${GIT_STATUS_MAX_BYTES} bytes`;
  return null;
};

import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

import { silentLog, type BrainLog } from '../../core/contract/BrainContext.js';
import { findRepoRoot } from './findRepoRoot.js';

/** .what = how long the one git call may take before the git line is left out */
export const DEFAULT_GIT_STATUS_TIMEOUT_MS = 1_000;

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
 *         null outside a repository, and when git is absent, fails or is slower than timeoutMs (a debug line says why)
 * .why = the system prompt states the repo root, the branch and how dirty the tree is, cheaply: no process at all outside
 *        a repository, never a file's name or content, and no lock taken (--no-optional-locks), so it never gets in the
 *        way of the user's own git commands
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
  return new Promise((done) => {
    execFile(
      'git',
      ['--no-optional-locks', 'status', '--porcelain=v2', '--branch'],
      {
        cwd,
        env: { ...(context.env ?? process.env), GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
        timeout: input.timeoutMs ?? DEFAULT_GIT_STATUS_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 32 * 1024 * 1024,
        windowsHide: true,
      },
      (error, stdout) => {
        if (!error) return done(parsePorcelainV2(stdout, root));
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; stderr?: string };
        const why =
          failure.code === 'ENOENT'
            ? 'git is not installed'
            : failure.killed
              ? `git took longer than ${input.timeoutMs ?? DEFAULT_GIT_STATUS_TIMEOUT_MS} ms`
              : failure.message.split('\n')[0];
        log.debug(`git status skipped: ${why}`);
        done(null);
      },
    );
  });
};

import { resolve } from 'node:path';

import { findHostProgram } from '../../process/findHostProgram.js';
import { genHostProgramEnv } from '../../process/genHostProgramEnv.js';
import { spawnGroup, type GroupEnd } from '../../process/spawnGroup.js';
import { genGitConfigOverrides } from './genGitConfigOverrides.js';
import { parseGitConfig } from './parseGitConfig.js';
import { findGitDirs, readGitCredentials } from './readGitCredentials.js';

/** .what = how a hardened git run went: it ran (how it ended), or it was not run and why */
export type HardenedGitRun = { ran: true; end: GroupEnd; bytes: Buffer | null } | { ran: false; why: string };

/**
 * .what = a git store of bhrain's own kept outside the workspace (a checkpoint store): its git dir and index, and the
 *         directory it records as its work tree
 * .why = git then reads neither the workspace's `.git` nor its config, and writes nothing in the workspace; only its own
 *        store and index
 */
export interface HardenedGitStore {
  gitDir: string;
  indexFile: string;
  workTree: string;
  /** more `-c` pairs after the hardened ones: the store's own settings (its index is bhrain's, not the workspace's) */
  config?: ReadonlyArray<readonly [string, string]>;
}

/**
 * .what = runs one git command that bhrain itself needs on the workspace (the status line, the audit's index bits),
 *         outside the sandbox, made harmless whatever the repository holds:
 *         - git is pointed at the git dir and common dir bhrain read (--git-dir, GIT_COMMON_DIR, --work-tree), so a
 *           `.git` file, a `commondir` or an invalid `.git` cannot send it to a config bhrain did not read;
 *         - every key of a command kind in every config file it reads (the repository's, a worktree's, the user's, and
 *           each they include) is overridden with `-c`, then the fixed HARDENED_GIT_CONFIG; a config file that exists
 *           but could not be read, or a key `-c` cannot name, and git is not run;
 *         - no system config (GIT_CONFIG_NOSYSTEM: its path is git's build's, not known here), no optional locks, no
 *           prompt, no askpass;
 *         - git itself is found on PATH outside the workspace, and its environment is genHostProgramEnv's: no secret
 * .why = git runs what a repository's config names (fsmonitor on every status, filters on every dirty file) with
 *        bhrain's environment; a model that can write anywhere in the workspace (or a repository the user cloned) must
 *        not make bhrain run anything, in this run's subagents or at the next run's start
 */
export const runHardenedGit = async (
  input: {
    cwd: string;
    args: readonly string[];
    timeoutMs: number;
    maxStdoutBytes: number;
    /** run on this store of bhrain's instead of the repository around cwd (which then need not exist) */
    store?: HardenedGitStore;
    /** written to git's stdin, then closed; absent = stdin is empty */
    stdin?: string | Buffer;
    /** stdout kept as bytes (`bytes`), up to maxStdoutBytes, instead of as text: object contents are not text */
    binary?: true;
  },
  context: { env: Record<string, string | undefined> },
): Promise<HardenedGitRun> => {
  const cwd = resolve(input.cwd);
  const found = findGitDirs(cwd);
  const dirs = input.store ? { root: input.store.workTree, gitDir: input.store.gitDir, commonDir: input.store.gitDir } : found;
  if (!dirs) return { ran: false, why: `${cwd} is not in a git repository git can be pointed at` };
  // the workspace: the repository, and the directory asked about (a cwd inside a nested checkout)
  const untrusted = [dirs.root, cwd, ...(found ? [found.root] : [])];
  const env = genHostProgramEnv({
    env: context.env,
    untrusted,
    extra: {
      GIT_COMMON_DIR: dirs.commonDir,
      ...(input.store ? { GIT_INDEX_FILE: input.store.indexFile } : {}),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '',
      SSH_ASKPASS: '',
      GIT_PAGER: 'cat',
      GIT_EDITOR: ':',
      GIT_PROTOCOL_FROM_USER: '0',
    },
  });
  const config = readGitCredentials({ cwd }, { env });
  if (config.unread.length > 0)
    return {
      ran: false,
      why: `git config ${config.unread[0]} could not be read (not a regular file, too big, or a path bhrain does not expand), so what it names is not known`,
    };
  const overrides = genGitConfigOverrides(config.files.flatMap((file) => parseGitConfig(file.text)));
  if ('refused' in overrides) return { ran: false, why: `git config key ${JSON.stringify(overrides.refused)} cannot be overridden` };
  const git = findHostProgram({ name: 'git', path: env.PATH, untrusted });
  if (!git) return { ran: false, why: 'git is not installed' };
  const child = spawnGroup({
    command: git,
    args: [
      '--no-optional-locks',
      `--git-dir=${dirs.gitDir}`,
      `--work-tree=${dirs.root}`,
      ...[...overrides.pairs, ...(input.store?.config ?? [])].flatMap(([key, value]) => ['-c', `${key}=${value}`]),
      ...input.args,
    ],
    cwd,
    env,
    ...(input.stdin === undefined ? {} : { stdio: ['pipe', 'pipe', 'pipe'] as const }),
    capture: { ...(input.binary ? {} : { stdout: { maxBytes: input.maxStdoutBytes } }), stderr: { maxBytes: 4 * 1024 } },
    timeoutMs: input.timeoutMs,
    // git here only reads the workspace: what it writes is in its store, whole or not at all
    killGraceMs: 0,
  });
  if (input.stdin !== undefined) child.child.stdin?.on('error', () => undefined).end(input.stdin);
  const chunks: Buffer[] = [];
  let kept = 0;
  if (input.binary)
    child.child.stdout?.on('data', (chunk: Buffer) => {
      // past the bound the rest is dropped: the caller sees the bytes short of what git said it wrote
      if (kept + chunk.length <= input.maxStdoutBytes) chunks.push(chunk);
      kept += chunk.length;
    });
  const end = await child.ended;
  return { ran: true, end, bytes: input.binary ? Buffer.concat(chunks) : null };
};

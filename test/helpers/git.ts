import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { tempDir } from './fs.js';

/** .what = runs git in a directory with a test identity and the given extra config, and returns its stdout */
export const runGit = (cwd: string, args: readonly string[], options: { config?: readonly string[]; env?: NodeJS.ProcessEnv } = {}) =>
  execFileSync(
    'git',
    ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...(options.config ?? []).flatMap((each) => ['-c', each]), ...args],
    {
      cwd,
      env: options.env,
      stdio: 'pipe',
      encoding: 'utf8',
    },
  );

/**
 * .what = a git repository with the given files: in a new temp dir (removed when the test file ends) or in a given one;
 *         committed when `commit` names the message, else left untracked
 * .why = most tests of files, git and agent files start from one; each kept its own copy of these lines
 */
export const genGitRepo = (
  input: { dir?: string; prefix?: string; branch?: string; files?: Record<string, string>; commit?: string } = {},
): string => {
  const repo = input.dir ?? tempDir(input.prefix);
  mkdirSync(repo, { recursive: true });
  runGit(repo, ['init', '-q', '-b', input.branch ?? 'main']);
  for (const [path, text] of Object.entries(input.files ?? {})) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  if (input.commit) {
    runGit(repo, ['add', '-A']);
    runGit(repo, ['commit', '-q', '-m', input.commit]);
  }
  return repo;
};

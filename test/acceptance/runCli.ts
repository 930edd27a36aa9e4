// runs the built CLI as a child process, the way a user or a CI step does (test/rhachet/ runs it the way rhachet does)
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const PACKAGE_ROOT = join(import.meta.dirname, '..', '..');

/** the result of one CLI run */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** spawns a command with piped stdio; writes `stdin` (or closes it at once) and collects everything */
export const runProcess = (input: {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  /** what the child gets as fd 3 and on, as spawn's stdio takes it (a number is an open fd, passed on) */
  moreFds?: Array<number | 'ignore'>;
}): Promise<CliRun> =>
  new Promise((resolve, reject) => {
    // 0-2 are pipes whatever follows them
    const child = spawn(input.command, input.args, {
      cwd: input.cwd,
      env: input.env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe', ...(input.moreFds ?? [])],
    }) as ChildProcessWithoutNullStreams;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input.stdin ?? '');
  });

/**
 * `bhrain <args>` through bin/bhrain; with a wrapper, run by it (`bwrap ... --`, to give the CLI an /etc/hosts of the
 * test's own)
 */
export const runBhrain = (input: {
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin?: string;
  moreFds?: Array<number | 'ignore'>;
  wrapper?: string[];
}) => {
  const bhrain = [process.execPath, join(PACKAGE_ROOT, 'bin', 'bhrain'), ...input.args];
  const [command, ...args] = [...(input.wrapper ?? []), ...bhrain];
  return runProcess({ ...input, command, args });
};

/**
 * the environment of a CLI run against the stand-in: its urls for both protocols, test keys, a ref store of its own,
 * and a config dir of its own (so the developer's own settings.json and AGENTS.md never reach a test)
 */
export const genCliEnv = (
  input: { standin: { url: string; openaiUrl: string }; home: string },
  overrides: Record<string, string | undefined> = {},
) => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  // the suite's temp dir, so what a run leaves there is what the suite's teardown sees
  TMPDIR: process.env.TMPDIR,
  BHRAIN_HOME: input.home,
  BHRAIN_CONFIG_DIR: join(input.home, 'config'),
  // node 22+: the CLI's compile cache (bhrain's own cache, like its refs) stays in the run's home, not the user's ~/.cache
  XDG_CACHE_HOME: join(input.home, 'cache'),
  ANTHROPIC_API_KEY: 'test-key',
  ANTHROPIC_BASE_URL: input.standin.url,
  QWEN_API_KEY: 'test-key',
  QWEN_BASE_URL: input.standin.openaiUrl,
  ...overrides,
});

/** .what = every regular file under a directory, read as text (symlinks are not followed): what a run left on disk */
export const readTree = async (dir: string): Promise<Array<{ path: string; text: string }>> => {
  const found: Array<{ path: string; text: string }> = [];
  const visit = async (path: string) => {
    const stats = await lstat(path).catch(() => null);
    if (!stats) return;
    if (stats.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name));
    else if (stats.isFile()) found.push({ path, text: await readFile(path, 'utf8') });
  };
  await visit(dir);
  return found;
};

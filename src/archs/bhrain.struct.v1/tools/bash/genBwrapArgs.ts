import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/** the fd on which bwrap writes its JSON status (the sandbox's pid, then its exit code) */
export const BWRAP_STATUS_FD = 3;

/** written after the command on the sandbox's stdin: where the handoff's read stops */
export const HANDOFF_END = '\0';

/**
 * .what = the script bash runs first in the sandbox: reads the command from stdin up to HANDOFF_END, then becomes
 *         `bash -c <command>` with stdin /dev/null, as the same bash ($0, its real path); it runs with --posix, so it
 *         does not source BASH_ENV (the command's bash does, once), and --norc, since a bash whose stdin is a socket
 *         takes itself for one started by sshd and sources ~/.bashrc
 * .why = the sandbox can start before its command is known (startSandbox); bash reads a socket a byte at a time,
 *        ~2 µs a byte here, which a command of a few hundred bytes does not feel
 */
const HANDOFF = `IFS= read -r -d '' command; exec "$0" -c "$command" </dev/null`;

/** paths inside a workspace whose contents later run outside the sandbox (hooks, core.hooksPath, core.fsmonitor) */
const GIT_EXECUTABLE_PATHS = ['.git/hooks', '.git/config'];

/**
 * .what = the paths of GIT_EXECUTABLE_PATHS that exist in the workspace now, to be bound read-only, with their inodes
 * .why = a model must not plant a hook or a config that runs code when the user next runs git, unconfined; a sandbox
 *        started earlier binds what was there then, so it serves a call only while the inodes are the same
 */
export const findGitPathsToProtect = async (cwdReal: string): Promise<Array<{ path: string; inode: string }>> => {
  const found = await Promise.all(
    GIT_EXECUTABLE_PATHS.map((path) =>
      stat(join(cwdReal, path)).then(
        (entry) => ({ path: join(cwdReal, path), inode: `${entry.dev}:${entry.ino}` }),
        () => null,
      ),
    ),
  );
  return found.filter((entry) => entry !== null);
};

/**
 * .what = bwrap's argument list that runs `bash -c <command>` confined, the command given on stdin: the filesystem
 *         read-only but the workspace (workspace-write) and a private /tmp, no network unless allowed, its own
 *         pid/ipc/uts namespaces, no capabilities
 * .why = the effect of a command is bounded by the kernel, whatever the command does, so nothing it starts outlives it
 */
export const genBwrapArgs = (input: {
  /** bash's real path on the host, visible at the same path inside */
  bashPath: string;
  mode: 'read-only' | 'workspace-write';
  allowNetwork: boolean;
  /** the working directory as given, and with symlinks resolved (what is bound) */
  cwd: string;
  cwdReal: string;
  /** from findGitPathsToProtect, bound read-only inside a writable workspace */
  gitPaths: readonly string[];
}): string[] => {
  const writable = input.mode === 'workspace-write';
  // a workspace under /tmp is bound after the private /tmp, so it is the real one, not hidden; any other is bound before
  // /dev, /proc and /tmp, so a workspace of / cannot uncover the host's /proc (other processes' environments)
  const underTmp = input.cwdReal === '/tmp' || input.cwdReal.startsWith('/tmp/');
  const workspace = writable ? ['--bind', input.cwdReal, input.cwdReal] : ['--ro-bind', input.cwdReal, input.cwdReal];
  return [
    '--ro-bind', '/', '/',
    ...(writable && !underTmp ? workspace : []),
    '--dev', '/dev',
    '--proc', '/proc',
    // a root caller keeps uid 0 inside: without this, kernel.core_pattern (run as root on the host) would be writable
    '--ro-bind', '/proc/sys', '/proc/sys',
    '--tmpfs', '/tmp',
    ...(underTmp ? workspace : []),
    ...(writable ? input.gitPaths.flatMap((path) => ['--ro-bind', path, path]) : []),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    ...(input.allowNetwork ? [] : ['--unshare-net']),
    // a root caller would otherwise keep every capability, and could remount / writable
    '--cap-drop', 'ALL',
    '--die-with-parent',
    // a new session: no TIOCSTI into the caller's terminal
    '--new-session',
    '--json-status-fd', String(BWRAP_STATUS_FD),
    '--chdir', input.cwd,
    '--',
    input.bashPath, '--norc', '--posix', '-c', HANDOFF,
  ];
};

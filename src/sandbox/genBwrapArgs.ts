import type { SandboxForwarder } from './network/sandboxForwarder.js';

import { type HiddenPaths } from './resolveHiddenPaths.js';
import { isUnder } from '../core/paths/isUnder.js';

/** the fd on which bwrap writes its JSON status (the sandbox's pid, then its exit code) */
export const BWRAP_STATUS_FD = 3;

/** the fd bwrap reads the supervisor's executable from (an open file of the host's bash) */
export const SUPERVISOR_EXECUTABLE_FD = 4;

/** the supervisor's fd for the commands' stderr; its own stderr (fd 2) is bwrap's, for diagnostics */
export const COMMAND_STDERR_FD = 5;

/** the fd bwrap reads the seccomp filter from (genSeccompFilter's program), which it installs before the supervisor runs */
export const SECCOMP_FILTER_FD = 6;

/** the supervisor's fd of the channel to bhrain (node's IPC), when the network is by domain: the forwarder's, then closed */
export const FORWARDER_CHANNEL_FD = 7;

/** the first fd bwrap reads a read-only file's content from (--ro-bind-data): a hidden file's (empty), a redacted config's */
export const FIRST_DATA_FD = 8;

/** where, inside the sandbox, bwrap puts the supervisor's copy of bash: mode 0111, so no command can read it */
const SUPERVISOR_PATH = '/dev/.bhrain-supervisor';

/**
 * .what = the variables of the environment that change how bash runs a script: options, functions, startup files,
 *         read timeouts, globbing, command lookup; with the sandbox, they reach each command but not the supervisor
 * .why = the supervisor's script must run the same whatever the user's environment: xtrace would write its steps among
 *        a command's output, noglob or GLOBIGNORE would blind its scan of /proc, TMOUT would end it
 */
export const isShellBehaviorVariable = (name: string): boolean =>
  /^(SHELLOPTS|BASHOPTS|BASH_ENV|ENV|BASH_COMPAT|BASH_XTRACEFD|PS4|TMOUT|GLOBIGNORE|EXECIGNORE|POSIXLY_CORRECT)$/.test(name) ||
  /^BASH_FUNC_.*%%$/.test(name);

/**
 * .what = the script each command runs in: a bash, started ahead of its call, that reads the command (NUL-terminated)
 *         on the sandbox's fd 0, then runs it with stdin /dev/null and stderr on COMMAND_STDERR_FD; until then its
 *         stderr is the supervisor's (bwrap's diagnostics), so a warning of bash's start is not written between calls
 * .why = bash's fork, exec and start (~1 ms) happen while the model answers, not between its answer and the output
 * .note = one line, so the lines bash names in the command's errors are the command's own. `eval` runs it as `bash -c`
 *         would, and as Claude Code runs its commands, with one word changed: a syntax error is `bash: eval: line N: …`
 *         where `bash -c` said `bash: -c: line N: …`; and the command sees its own text as $BHRAIN_COMMAND. Where the
 *         environment has shell-behaviour variables (rare), they must apply from bash's start, so the reader execs
 *         `env … bash -c <command>` as the supervisor used to
 */
const COMMAND_READER = `IFS= read -r -d "" BHRAIN_COMMAND || exit; exec 0</dev/null 2>&${COMMAND_STDERR_FD} ${COMMAND_STDERR_FD}>&-; if test $# -gt 0; then exec env "$@" "$0" -c "$BHRAIN_COMMAND"; fi; eval "$BHRAIN_COMMAND"`;

/**
 * .what = the script of the sandbox's supervisor, pid 1 of the sandbox: for each call it starts COMMAND_READER, which
 *         reads the call's command on fd 0 and runs it; it waits for it, SIGKILLs every other process of the sandbox
 *         until none is left, then reads the call's nonce (NUL-terminated, after the command) on fd 0, writes the exit
 *         status (3 digits) and the nonce after the command's stdout and the nonce after its stderr, and starts the
 *         next call's reader
 * .why = one sandbox serves every call of a run: bubblewrap's setup and a fork of bhrain's process are paid once, not per
 *        call. What a fresh sandbox per call gave, the supervisor keeps:
 *        - nothing outlives its call: as pid 1 it kills the namespace down to itself before it says the call is done;
 *          the next reader starts only after that;
 *        - a command cannot reach it: it runs from a copy of bash that no command may read (mode 0111, caps dropped),
 *          which makes the kernel mark it non-dumpable, so no command may ptrace it or open its /proc files (its
 *          fds, memory, environment); as pid 1 it gets no signal from inside but those it traps (USR1: end the call);
 *        - a command cannot fake the end of its call: it never sees the nonce, which waits on fd 0 (which the reader
 *          closed before the command ran) until the supervisor reads it.
 *        A reader killed before it read its command (USR1) leaves the command where the nonce should be: that call
 *        cannot end in order, and its sandbox is not used again
 * .note = it first closes every fd but 0, 1, 2 and COMMAND_STDERR_FD: bwrap's status and the executable, and any file
 *         bhrain's own parent left open (`exec 200>lock; flock 200` in a CI script: node marks close-on-exec only the
 *         fds below the first unused number, and bwrap closes none), which would let a command write where the
 *         sandbox's mounts do not reach.
 *         $1 is the bash each command runs in; $2… are the variables isShellBehaviorVariable kept from the supervisor's
 *         environment (NAME=VALUE), given back to each command through env(1). It runs with --posix (no BASH_ENV) and
 *         --norc (bash on a socket reads ~/.bashrc, as if sshd ran it). Async commands of a shell without job control
 *         ignore SIGINT and SIGQUIT, and read /dev/null: the reader's subshell gives them back their defaults, and fd 0.
 *         With a forwarder (the network by domain), the supervisor runs it once, before the first reader: it hands its
 *         listening socket to bhrain over the channel on FORWARDER_CHANNEL_FD and exits (a forwarder that fails ends
 *         the sandbox, with what it said: a call in it fails loudly, never with the network silently off); then the
 *         supervisor closes the channel and unsets the variables node's spawn set for it, so no command finds either
 */
const genSupervisorScript = (
  forwarder: SandboxForwarder | null,
): string => `for fd in /proc/self/fd/*; do fd=\${fd##*/}; case $fd in 0|1|2|${COMMAND_STDERR_FD}${forwarder ? `|${FORWARDER_CHANNEL_FD}` : ''}) ;; *) eval "exec $fd>&-" ;; esac; done
bash=$1
shift
reader='${COMMAND_READER}'
ending=
trap 'ending=1; kill -TERM -1 2>/dev/null' USR1
${forwarder ? genForwarderStart(forwarder) : ''}while :; do
  (trap - INT QUIT USR1; exec "$bash" -c "$reader" "$bash" "$@") <&0 &
  pid=$!
  wait "$pid"
  status=$?
  while test -n "$ending"; do ending=; wait "$pid"; status=$?; done
${KILL_ALL}
  IFS= read -r -d '' nonce || exit
  printf '%03d%s' "$status" "$nonce"
  printf '%s' "$nonce" >&${COMMAND_STDERR_FD}
done`;

/** .what = the supervisor's end of a call: SIGKILL to every process but itself, until none is left */
const KILL_ALL = `  while :; do
    kill -KILL -1 2>/dev/null
    alive=
    for entry in /proc/[0-9]*; do
      if test "$entry" = /proc/1 || ! IFS= read -r stat 2>/dev/null <"$entry/stat"; then continue; fi
      stat=\${stat##*) }
      if test "\${stat%% *}" != Z; then alive=1; break; fi
    done
    if test -z "$alive"; then break; fi
  done`;

/** .what = a string as one word of a bash script */
const quoteForBash = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * .what = the supervisor's start of the forwarder: node, from / and with an environment of the channel's two variables
 *         alone, stdin /dev/null, stdout and stderr the supervisor's stderr (bwrap's, which bhrain keeps to say why a
 *         sandbox ended); then the channel closed and its variables unset. A forwarder that fails ends the sandbox
 * .note = `exec -c` empties the environment (no NODE_OPTIONS, LD_PRELOAD or workspace path reaches node) and drops
 *         assignments before it, so a bash of the supervisor's own sets the two variables node reads its channel from
 */
const genForwarderStart = (forwarder: SandboxForwarder): string =>
  `if ! (cd / && exec -c "$bash" --norc --posix -c 'export NODE_CHANNEL_FD=${FORWARDER_CHANNEL_FD} NODE_CHANNEL_SERIALIZATION_MODE=json; exec "$@"' bhrain-forwarder ${[forwarder.nodePath, ...forwarder.nodeArgs].map(quoteForBash).join(' ')} </dev/null >&2 ${COMMAND_STDERR_FD}>&-); then
  echo "bhrain-sandbox: the network forwarder did not start" >&2
  exit 70
fi
exec ${FORWARDER_CHANNEL_FD}>&-
unset NODE_CHANNEL_FD NODE_CHANNEL_SERIALIZATION_MODE
`;

/** .what = a file the sandbox shows with other content than the host's, read-only: empty for a hidden one */
export interface SandboxDataFile {
  path: string;
  text: string;
}

/** .what = what the sandbox hides: directories (an empty read-only tmpfs over each) and files (empty and read-only) */
export interface SandboxHidden {
  dirs: readonly string[];
  files: readonly SandboxDataFile[];
  /** paths inside a hidden directory bound back read-only (allowRead) */
  handedBack: readonly string[];
}

/**
 * .what = the workspace's roots as real paths: the working directory's, then each added directory (--add-dir) that no
 *         other root already holds, in their order
 * .why = one definition of where a run may write, for the sandbox's binds, the sweep, and the write and edit tools: a
 *        root inside another adds nothing, and binding it twice would only reorder mounts
 */
export const genWorkspaceRoots = (cwdReal: string, addDirsReal: readonly string[] = []): string[] => {
  const all = [...new Set([cwdReal, ...addDirsReal])];
  return all.filter((root) => !all.some((other) => other !== root && isUnder(other, root)));
};

/**
 * .what = whether the sandbox shows the host's file at a (real) path: not under /proc and /dev, which are its own, nor
 *         under /tmp, its private one, unless inside a root of the workspace (genWorkspaceRoots)
 */
export const isSeenInSandbox = (path: string, roots: readonly string[]): boolean =>
  !isUnder('/proc', path) &&
  !isUnder('/dev', path) &&
  (!isUnder('/tmp', path) || roots.some((root) => isUnder(root, path) && path !== root));

/**
 * .what = the hidden paths of a call as the sandbox needs them: real paths of what exists, less what the sandbox never
 *         shows anyway (isSeenInSandbox)
 * .why = only what exists is hidden, so bubblewrap makes no mount point on the host; only real paths, so a mount never
 *        lands through a symlink
 */
export const pickSandboxHidden = (hidden: HiddenPaths, roots: readonly string[]): SandboxHidden => {
  const shown = (path: string) => isSeenInSandbox(path, roots);
  const present = hidden.entries.filter((entry) => entry.realPath !== null && shown(entry.realPath));
  return {
    dirs: present.filter((entry) => entry.isDirectory).map((entry) => entry.realPath!),
    files: present.filter((entry) => !entry.isDirectory).map((entry) => ({ path: entry.realPath!, text: '' })),
    // the workspace's roots are bound back by genBwrapArgs itself
    handedBack: hidden.handedBack.filter((path) => !roots.some((root) => isUnder(path, root)) && shown(path)),
  };
};

/**
 * .what = the files a sandbox reads from fds FIRST_DATA_FD and on, in their order: the hidden files, then the others
 * .why = genBwrapArgs names the fds, the sandbox's start writes each file's content into its fd
 */
export const sandboxDataFilesOf = (hidden: SandboxHidden | undefined, dataFiles: readonly SandboxDataFile[] = []): SandboxDataFile[] => [
  ...(hidden?.files ?? []),
  ...dataFiles,
];

/**
 * .what = bwrap's argument list for a sandbox whose supervisor runs, in bash, each call's command it is given on
 *         stdin: the filesystem read-only but the workspace (workspace-write) and a private /tmp, the hidden paths
 *         empty or absent, no network unless allowed, its own pid/ipc/uts namespaces, no capabilities
 * .why = the effect of a command is bounded by the kernel, whatever the command does; its pid namespace lets the
 *        supervisor kill everything a call started before the call ends
 */
export const genBwrapArgs = (input: {
  /** bash's real path on the host, visible at the same path inside */
  bashPath: string;
  mode: 'read-only' | 'workspace-write';
  allowNetwork: boolean;
  /** the working directory as given (the commands start there) */
  cwd: string;
  /** the workspace's roots, real paths (genWorkspaceRoots): what is bound, writable in workspace-write */
  roots: readonly string[];
  /** the protected entries that exist and are bound read-only inside a writable workspace (genProtectedTree's mounts) */
  protectedPaths: readonly string[];
  /** the git directories bound writable onto themselves, before protectedPaths: mount points, never renamed (genProtectedTree) */
  pinnedPaths?: readonly string[];
  /** the variables isShellBehaviorVariable picks from the environment, as NAME=VALUE, for each command */
  shellVariables: readonly string[];
  /** with the network by domain: the forwarder the supervisor runs first, from planSandboxForwarder (allowNetwork false) */
  forwarder?: SandboxForwarder | null;
  /** from pickSandboxHidden: what reads as empty or absent; absent only for checkBashSandbox's probe, which reads nothing */
  hidden?: SandboxHidden;
  /** files shown read-only with the given content instead of the host's (git's config, its credentials redacted) */
  dataFiles?: readonly SandboxDataFile[];
}): string[] => {
  const hidden = input.hidden ?? { dirs: [], files: [], handedBack: [] };
  const writable = input.mode === 'workspace-write';
  // a root under /tmp is bound after the private /tmp, so it is the real one, not hidden; any other is bound before
  // /dev, /proc and /tmp, so a root of / cannot uncover the host's /proc (other processes' environments)
  const { roots } = input;
  const bindRoot = (root: string) => [writable ? '--bind' : '--ro-bind', root, root];
  const underTmp = (root: string) => isUnder('/tmp', root);
  const insideWorkspace = (path: string) => roots.some((root) => path !== root && isUnder(root, path));
  // each file read from its own fd, in the order sandboxDataOf lists their contents
  const dataFiles = sandboxDataFilesOf(hidden, input.dataFiles);
  const bindData = (file: SandboxDataFile) => [
    '--perms',
    '0444',
    '--ro-bind-data',
    String(FIRST_DATA_FD + dataFiles.indexOf(file)),
    file.path,
  ];
  const hide = (which: (path: string) => boolean) => [
    ...hidden.dirs.filter(which).flatMap((path) => ['--tmpfs', path]),
    // an empty read-only file, not /dev/null: a device under the sandbox's nodev root reads as EACCES
    ...hidden.files.filter((file) => which(file.path)).flatMap(bindData),
  ];
  return [
    '--ro-bind',
    '/',
    '/',
    ...(writable ? roots.filter((root) => !underTmp(root)).flatMap(bindRoot) : []),
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // a root caller keeps uid 0 inside: without this, kernel.core_pattern (run as root on the host) would be writable
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--tmpfs',
    '/tmp',
    ...roots.filter(underTmp).flatMap(bindRoot),
    // after every bind that could uncover them: first those around the workspace, then the workspace bound back over
    // them if one holds it, then those inside it, then what is handed back inside them
    ...hide((path) => !insideWorkspace(path)),
    ...roots.filter((root) => hidden.dirs.some((path) => isUnder(path, root))).flatMap(bindRoot),
    ...hide(insideWorkspace),
    ...hidden.handedBack.flatMap((path) => ['--ro-bind-try', path, path]),
    // read-only once what is bound back under them has its mount point
    ...hidden.dirs.flatMap((path) => ['--remount-ro', path]),
    // -try: an entry removed since it was found (by its owner, between calls) binds nothing, and the sweep sees the rest
    ...(writable ? (input.pinnedPaths ?? []).flatMap((path) => ['--bind-try', path, path]) : []),
    ...(writable ? input.protectedPaths.flatMap((path) => ['--ro-bind-try', path, path]) : []),
    // over what is bound above (.git/config): the file as the model may see it
    ...(input.dataFiles ?? []).flatMap(bindData),
    // the supervisor's executable, unreadable to every command
    '--perms',
    '0111',
    '--ro-bind-data',
    String(SUPERVISOR_EXECUTABLE_FD),
    SUPERVISOR_PATH,
    '--unshare-pid',
    // the supervisor is pid 1: no reaper of bwrap's own between it and the commands
    '--as-pid-1',
    '--unshare-ipc',
    '--unshare-uts',
    ...(input.allowNetwork ? [] : ['--unshare-net']),
    // a root caller would otherwise keep every capability, and could remount / writable
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    // a new session: no TIOCSTI into the caller's terminal
    '--new-session',
    // no unix socket, no io_uring, no TIOCSTI: every process of the sandbox runs under it (genSeccompFilter)
    '--seccomp',
    String(SECCOMP_FILTER_FD),
    '--json-status-fd',
    String(BWRAP_STATUS_FD),
    '--chdir',
    input.cwd,
    '--',
    // $0 names it in ps
    SUPERVISOR_PATH,
    '--norc',
    '--posix',
    '-c',
    genSupervisorScript(input.forwarder ?? null),
    'bhrain-sandbox',
    input.bashPath,
    ...input.shellVariables,
  ];
};

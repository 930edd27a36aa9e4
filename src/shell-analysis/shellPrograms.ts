/**
 * .what = how a wrapper program finds the command it runs: the options that take a value, how many positional words
 *         come before the command (`timeout 5 rm …`, `flock FILE rm …`), and whether it is transparent
 * .why = a wrapper is unwrapped so rules judge what it runs; a transparent one (time, nice, timeout) adds no effect of
 *        its own, so an allow-list judges only what it runs, while sudo or xargs must be allowed themselves too
 */
export interface ShellWrapper {
  takesValue?: readonly string[];
  positional?: number;
  transparent: boolean;
}

/** wrappers that run the rest of their words as a command (env, xargs, find, flock and busybox get extra handling) */
export const SHELL_WRAPPERS: Readonly<Record<string, ShellWrapper>> = {
  env: { takesValue: ['-u', '--unset', '-C', '--chdir'], transparent: true },
  command: { transparent: true },
  builtin: { transparent: true },
  exec: { takesValue: ['-a'], transparent: true },
  nohup: { transparent: true },
  setsid: { transparent: true },
  time: { takesValue: ['-f', '--format', '-o', '--output'], transparent: true },
  nice: { takesValue: ['-n', '--adjustment'], transparent: true },
  ionice: { takesValue: ['-c', '--class', '-n', '--classdata', '-p', '--pid', '-P', '--pgid', '-u', '--uid'], transparent: true },
  chrt: { takesValue: ['-T', '--sched-runtime', '-P', '--sched-period', '-D', '--sched-deadline'], positional: 1, transparent: true },
  taskset: { positional: 1, transparent: true },
  timeout: { takesValue: ['-s', '--signal', '-k', '--kill-after'], positional: 1, transparent: true },
  stdbuf: { takesValue: ['-i', '--input', '-o', '--output', '-e', '--error'], transparent: true },
  coproc: { transparent: true },
  busybox: { transparent: true },
  sudo: {
    takesValue: [
      '-u',
      '--user',
      '-g',
      '--group',
      '-C',
      '--close-from',
      '-D',
      '--chdir',
      '-h',
      '--host',
      '-p',
      '--prompt',
      '-r',
      '--role',
      '-t',
      '--type',
      '-U',
      '--other-user',
      '-T',
      '--command-timeout',
      '-R',
      '--chroot',
    ],
    transparent: false,
  },
  doas: { takesValue: ['-u', '-C'], transparent: false },
  flock: { takesValue: ['-w', '--wait', '--timeout', '-E', '--conflict-exit-code'], positional: 1, transparent: false },
  xargs: {
    takesValue: [
      '-a',
      '--arg-file',
      '-d',
      '--delimiter',
      '-E',
      '-I',
      '-L',
      '--max-lines',
      '-n',
      '--max-args',
      '-P',
      '--max-procs',
      '-s',
      '--max-chars',
      '--process-slot-var',
    ],
    transparent: false,
  },
};

/** shells whose `-c` string is bash syntax: a literal string is parsed and judged like the line itself */
export const BASH_LIKE_SHELLS: ReadonlySet<string> = new Set(['bash', 'sh', 'dash', 'ash', 'rbash']);

/**
 * .what = programs that run a command the analysis does not unwrap: a command string, another syntax, another host,
 *         user or namespace; each maps to why
 * .why = a deny rule cannot see what they run, so a line using one is asked about, never allowed silently
 */
export const OPAQUE_PROGRAMS: Readonly<Record<string, string>> = Object.fromEntries([
  ...['zsh', 'ksh', 'mksh', 'yash', 'posh', 'fish', 'csh', 'tcsh', 'hush'].map((shell) => [
    shell,
    `\`${shell}\` runs commands in a syntax the rules do not parse`,
  ]),
  ...[
    'script',
    'su',
    'runuser',
    'setpriv',
    'capsh',
    'sg',
    'newgrp',
    'pkexec',
    'unshare',
    'nsenter',
    'chroot',
    'schroot',
    'setarch',
    'linux32',
    'linux64',
    'i386',
    'x86_64',
    'uname26',
    'prlimit',
    'systemd-run',
    'ssh',
    'watch',
    'parallel',
    'strace',
    'ltrace',
    'valgrind',
    'gdb',
    'unbuffer',
    'expect',
    'fakeroot',
    'faketime',
    'firejail',
    'bwrap',
    'proxychains',
    'proxychains4',
    'torsocks',
    'catchsegv',
    'numactl',
    'cgexec',
    'dbus-run-session',
    'xvfb-run',
    'at',
    'batch',
  ].map((program) => [program, `\`${program}\` runs a command the rules do not look into`]),
  ['source', '`source` runs commands from a file that the rules cannot see'],
  ['.', '`.` runs commands from a file that the rules cannot see'],
  ['enable', '`enable` loads or hides builtins, so a name may no longer be the program the rules think'],
  ['alias', 'an alias can rename a denied command so that the rules cannot see it'],
  ['fc', '`fc` re-runs commands from the history'],
]);

/** names whose value bash runs or uses to find programs: assigning one is not understood */
const DANGEROUS_VARIABLES = new Set([
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PATH',
  'LD_PRELOAD',
  'LD_AUDIT',
  'LD_LIBRARY_PATH',
  'BASH_LOADABLES_PATH',
]);

/** .what = whether assigning this variable can make bash run, or find, a command the rules do not see */
export const isDangerousVariable = (name: string): boolean => DANGEROUS_VARIABLES.has(name) || name.startsWith('BASH_FUNC_');

/**
 * .what = environment variables that only tune output, locale or logging; other `VAR=x cmd` prefixes stay part of the
 *         command an allow rule must match
 * .why = `GIT_SSH_COMMAND=… git fetch` or `PAGER=… git log` make an allowed program run another command
 */
export const isInertVariable = (name: string): boolean =>
  /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CI|DEBUG|NODE_ENV|RUST_LOG|RUST_BACKTRACE|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE)$/.test(
    name,
  );

/** find's actions that run a command up to `;` or `+`, and those that write a file named by the next word */
export const FIND_EXEC_ACTIONS: ReadonlySet<string> = new Set(['-exec', '-execdir', '-ok', '-okdir']);
export const FIND_WRITE_ACTIONS: ReadonlySet<string> = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

/** reserved words: seen as a program name, the parse went wrong (`coproc c { … }`) */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  '{',
  '}',
  '(',
  ')',
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'for',
  'in',
  'case',
  'esac',
  'function',
  'select',
  '!',
  '[[',
  ']]',
]);

/** targets a redirect may write without changing a file */
export const isHarmlessDevice = (path: string): boolean => /^\/dev\/(null|stdout|stderr|fd\/\d+)$/.test(path);

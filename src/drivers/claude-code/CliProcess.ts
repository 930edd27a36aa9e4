import { constants } from 'node:os';

import pty from '@lydell/node-pty';

import { spawnGroup } from '../../process/spawnGroup.js';
import { superviseGroup } from '../../process/superviseGroup.js';

/** .what = how a CLI process ended */
export interface CliExit {
  code: number | null;
  signal: string | null;
}

/**
 * .what = one running CLI process, headless (pipes) or in a PTY, behind one interface
 * .why = the handle drives both modes the same way: raw bytes in, raw bytes out, exactly one exit
 */
export interface CliProcess {
  /** null when the spawn itself failed (the error is in `tail` and `exited`) */
  pid: number | null;
  write: (data: string) => void;
  onData: (listener: (chunk: string) => void) => void;
  /** resolves once, when the process has exited */
  exited: Promise<CliExit>;
  /** SIGTERM to the whole process group, SIGKILL after the grace; resolves when it has exited */
  kill: () => Promise<CliExit>;
  /** the tail of what the process wrote to stderr (piped) or to its screen (PTY), for error messages */
  tail: () => string;
}

/** the env var that marks every process a CLI starts, so its leftovers can be found after it died */
export const CLI_TAG_ENV = 'BHRAIN_CLI_RUN';
/** how much of its stderr (bytes, piped) or of its screen (characters, PTY) is kept for error messages */
const TAIL_LENGTH = 8_192;

const KILL_GRACE_MS = 2_000;

/** .what = a headless process in its own process group (spawnGroup), stdin/stdout piped, stderr kept for diagnostics */
export const spawnPiped = (input: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }): CliProcess => {
  const group = spawnGroup({
    command: input.command,
    args: input.args,
    cwd: input.cwd,
    env: input.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    capture: { stderr: { maxBytes: TAIL_LENGTH, keep: 'tail' } },
    killGraceMs: KILL_GRACE_MS,
  });
  const { child } = group;
  let spawnError = '';
  // a write after the process died must not throw out of the caller's event loop
  child.stdin?.on('error', () => {});
  // once everything is over: the leader exited and its streams closed (what it wrote last is read)
  const exited = group.ended.then((end): CliExit => {
    if (end.spawnError) spawnError = `\n${end.spawnError}`;
    return { code: end.exitCode, signal: end.exitSignal };
  });
  return {
    pid: group.pid,
    write: (data) => void child.stdin?.write(data),
    onData: (listener) => void child.stdout?.on('data', (chunk: Buffer) => listener(chunk.toString('utf8'))),
    exited,
    kill: () => group.stop().then(() => exited),
    tail: () => {
      const { stderr } = group.captured();
      return `${stderr.head}${stderr.tail}${spawnError}`;
    },
  };
};

/**
 * .what = a process in a pseudo-terminal (xterm-256color), raw bytes both ways
 * .note = node-pty forks the child itself (forkpty: a session of its own, so a group of its own), with no node child to
 *         give spawnGroup; the group is supervised the same way (superviseGroup): killed at its leader's exit, by
 *         kill(), and at bhrain's exit
 */
export const spawnPty = (input: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }): CliProcess => {
  const term = pty.spawn(input.command, input.args, {
    name: 'xterm-256color',
    cols: 120,
    rows: 40,
    cwd: input.cwd,
    env: { ...input.env, TERM: 'xterm-256color' } as Record<string, string>,
  });
  const group = superviseGroup({ pid: term.pid, killGraceMs: KILL_GRACE_MS });
  let screen = '';
  term.onData((chunk) => void (screen = (screen + chunk).slice(-TAIL_LENGTH)));
  const exited = new Promise<CliExit>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      group.leaderExited();
      resolve({ code: signal ? null : exitCode, signal: signal ? (osSignalName(signal) ?? String(signal)) : null });
    });
  });
  return {
    pid: term.pid,
    write: (data) => term.write(data),
    onData: (listener) => void term.onData(listener),
    exited,
    kill: () => {
      group.stop();
      return exited;
    },
    tail: () => screen,
  };
};

/** .what = the name of a signal number, e.g. 15 → SIGTERM */
const osSignalName = (signal: number): string | undefined => Object.entries(constants.signals).find(([, value]) => value === signal)?.[0];

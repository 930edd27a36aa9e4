import { spawn as spawnChild } from 'node:child_process';
import { constants } from 'node:os';

import pty from '@lydell/node-pty';

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
  pid: number;
  write: (data: string) => void;
  onData: (listener: (chunk: string) => void) => void;
  /** resolves once, when the process has exited */
  exited: Promise<CliExit>;
  /** SIGTERM to the whole process group, SIGKILL after the grace; resolves when it has exited */
  kill: () => Promise<CliExit>;
  /** the tail of what the process wrote to stderr (piped processes only), for error messages */
  stderr?: () => string;
}

const KILL_GRACE_MS = 2_000;

/** .what = signals a process group, ignoring one that is already gone */
const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
};

/** .what = the kill of a process group: SIGTERM, then SIGKILL if it lingers, then the exit */
const genKill = (pid: number, exited: Promise<CliExit>, isDone: () => boolean) => async (): Promise<CliExit> => {
  if (!isDone()) {
    signalGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }
  // children that outlived the leader (a tool's shell) go with the group
  signalGroup(pid, 'SIGKILL');
  return exited;
};

/** .what = a headless process in its own process group, stdin/stdout piped, stderr kept for diagnostics */
export const spawnPiped = (input: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }): CliProcess => {
  const child = spawnChild(input.command, input.args, { cwd: input.cwd, env: input.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let done = false;
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8_192);
  });
  // a write after the process died must not throw out of the caller's event loop
  child.stdin.on('error', () => {});
  const exited = new Promise<CliExit>((resolve) => {
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    child.once('error', (error) => {
      done = true;
      stderr += `\n${error.message}`;
      resolve({ code: null, signal: null });
    });
  });
  return {
    pid: child.pid ?? -1,
    write: (data) => void child.stdin.write(data),
    onData: (listener) => void child.stdout.on('data', (chunk: Buffer) => listener(chunk.toString('utf8'))),
    exited,
    kill: genKill(child.pid ?? -1, exited, () => done),
    stderr: () => stderr,
  };
};

/** .what = a process in a pseudo-terminal (xterm-256color), raw bytes both ways */
export const spawnPty = (input: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }): CliProcess => {
  const term = pty.spawn(input.command, input.args, {
    name: 'xterm-256color',
    cols: 120,
    rows: 40,
    cwd: input.cwd,
    env: { ...input.env, TERM: 'xterm-256color' } as Record<string, string>,
  });
  let done = false;
  const exited = new Promise<CliExit>((resolve) => {
    term.onExit(({ exitCode, signal }) => {
      done = true;
      resolve({ code: signal ? null : exitCode, signal: signal ? (osSignalName(signal) ?? String(signal)) : null });
    });
  });
  return {
    pid: term.pid,
    write: (data) => term.write(data),
    onData: (listener) => void term.onData(listener),
    exited,
    kill: genKill(term.pid, exited, () => done),
  };
};

/** .what = the name of a signal number, e.g. 15 → SIGTERM */
const osSignalName = (signal: number): string | undefined =>
  Object.entries(constants.signals).find(([, value]) => value === signal)?.[0];

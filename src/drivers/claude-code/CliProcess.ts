import { spawn as spawnChild } from 'node:child_process';
import { constants } from 'node:os';

import pty from '@lydell/node-pty';

import { endGroup } from '../../sandbox/process/signalGroup.js';

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
const TAIL_CHARS = 8_192;

const KILL_GRACE_MS = 2_000;

/** .what = the kill of a process group (endGroup), resolving to how the leader exited */
const genKill = (pid: number | null, exited: Promise<CliExit>, isDone: () => boolean) => async (): Promise<CliExit> => {
  await endGroup({ pid, exited, running: !isDone(), graceMs: KILL_GRACE_MS });
  return exited;
};

/** .what = a headless process in its own process group, stdin/stdout piped, stderr kept for diagnostics */
export const spawnPiped = (input: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }): CliProcess => {
  const child = spawnChild(input.command, input.args, { cwd: input.cwd, env: input.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let done = false;
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-TAIL_CHARS);
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
  // a failed spawn (e.g. ENOENT) has no pid: nothing to signal, ever
  const pid = child.pid ?? null;
  return {
    pid,
    write: (data) => void child.stdin.write(data),
    onData: (listener) => void child.stdout.on('data', (chunk: Buffer) => listener(chunk.toString('utf8'))),
    exited,
    kill: genKill(pid, exited, () => done),
    tail: () => stderr,
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
  let screen = '';
  term.onData((chunk) => void (screen = (screen + chunk).slice(-TAIL_CHARS)));
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
    tail: () => screen,
  };
};

/** .what = the name of a signal number, e.g. 15 → SIGTERM */
const osSignalName = (signal: number): string | undefined => Object.entries(constants.signals).find(([, value]) => value === signal)?.[0];

import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

import type { BashStreamText } from './BashStreamText.js';
import { BoundedCapture, type BoundedCaptureInput } from './BoundedCapture.js';
import { superviseGroup } from './superviseGroup.js';

/** how long after the leader's exit its pipes may stay open, unless the caller says otherwise */
const CLOSE_GRACE_MS = 2_000;

/** .what = how a group's leader exited: its exit code, or the signal that ended it */
export interface GroupExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** .what = how a child started by spawnGroup ended, and what it printed to the streams captured */
export interface GroupEnd {
  /** the exit code; null when a signal ended the leader, or when the timeout or the abort did */
  exitCode: number | null;
  /** the signal that ended the leader, when it was not the timeout's or the abort's */
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** set when the child could not be started at all (then nothing ran) */
  spawnError?: string;
  /** the captured stdout and stderr (empty when not captured) */
  stdout: BashStreamText;
  stderr: BashStreamText;
  elapsedMs: number;
}

/** .what = what to start, and within which bounds */
export interface SpawnGroupInput {
  command: string;
  /** argv: never a shell string */
  args: readonly string[];
  cwd: string;
  /** undefined values are left out */
  env: Record<string, string | undefined>;
  /** the child's fds; default: stdin ignored (a read gets EOF instead of hanging), stdout and stderr piped; 'ipc' is
   *  node's channel (child.send, the 'message' event), at most one */
  stdio?: ReadonlyArray<'pipe' | 'ignore' | 'ipc' | number>;
  /** keeps stdout or stderr in a BoundedCapture; a piped stream not captured is the caller's to read */
  capture?: { stdout?: BoundedCaptureInput; stderr?: BoundedCaptureInput };
  /** the group is stopped after this long (the end says timedOut); absent: no limit */
  timeoutMs?: number;
  /** the group is stopped when it aborts (the end says aborted) */
  signal?: AbortSignal;
  /** between SIGTERM and SIGKILL; 0: SIGKILL at once */
  killGraceMs: number;
  /** after the leader's exit, how long a process outside the group may hold the pipes before the end comes without them (default 2 s) */
  closeGraceMs?: number;
  /** runs in the leader's exit event, once its group is killed: where a caller finds what left the group */
  onExit?: (exit: GroupExit) => void;
}

/** .what = a child leading its own process group, as spawnGroup started it */
export interface ChildGroup {
  /** the leader's pid, which is the group's id; null when the spawn failed */
  readonly pid: number | null;
  /** the node child, for the streams a caller reads or writes itself (stdin, a protocol on stdout, extra fds) */
  readonly child: ChildProcess;
  /** how the leader exited, null while it runs (and after a failed spawn) */
  readonly exit: GroupExit | null;
  /** resolves when the leader exited, or the spawn failed (code and signal null) */
  readonly exited: Promise<GroupExit>;
  /** resolves once it is over: the leader exited, its group is dead, its pipes closed (or closeGraceMs passed) */
  readonly ended: Promise<GroupEnd>;
  /** the captured streams as they are now */
  captured: () => { stdout: BashStreamText; stderr: BashStreamText };
  /** SIGTERM to the group, SIGKILL after killGraceMs; resolves with the end */
  stop: () => Promise<GroupEnd>;
  /** SIGKILL to the group now */
  kill: () => void;
}

const NOTHING: BashStreamText = { head: '', tail: '', droppedBytes: 0, totalBytes: 0 };

/** .what = a capture of one stream, when asked for and the stream is piped */
const captureOf = (stream: Readable | null, spec: BoundedCaptureInput | undefined): BoundedCapture | null => {
  if (!stream || !spec) return null;
  const capture = new BoundedCapture(spec);
  stream.on('data', (chunk: Buffer) => capture.write(chunk));
  return capture;
};

/**
 * .what = starts a child in a process group of its own, and ends it with nothing left behind: a timeout and an abort
 *         signal stop it (SIGTERM, SIGKILL after killGraceMs), its group is SIGKILLed once the leader exits and if
 *         bhrain exits first, stdout and stderr are captured within bounds, and the end says how it ended
 * .why = every child bhrain starts (bash, the sandbox, MCP servers, ripgrep, git, the claude CLI) needs the same care;
 *        written once, none lingers or floods differently (as codex routes every process through one ExecRequest)
 */
export const spawnGroup = (input: SpawnGroupInput): ChildGroup => {
  const startedAt = Date.now();
  const child = spawn(input.command, input.args, {
    cwd: input.cwd,
    env: input.env,
    detached: true,
    stdio: [...(input.stdio ?? ['ignore', 'pipe', 'pipe'])],
    windowsHide: true,
  });
  const pid = child.pid ?? null;
  const supervisor = superviseGroup({ pid, killGraceMs: input.killGraceMs, timeoutMs: input.timeoutMs, signal: input.signal });
  const stdout = captureOf(child.stdout, input.capture?.stdout);
  const stderr = captureOf(child.stderr, input.capture?.stderr);
  const captured = () => ({ stdout: stdout?.text() ?? NOTHING, stderr: stderr?.text() ?? NOTHING });
  let exit: GroupExit | null = null;
  let spawnError: string | undefined;
  let closeTimer: NodeJS.Timeout | undefined;
  let settleExited!: (exit: GroupExit) => void;
  let settleEnded!: (end: GroupEnd) => void;
  const exited = new Promise<GroupExit>((resolve) => (settleExited = resolve));
  const ended = new Promise<GroupEnd>((resolve) => (settleEnded = resolve));
  let finished = false;

  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearTimeout(closeTimer);
    supervisor.leaderExited();
    for (const stream of child.stdio) stream?.destroy();
    const stopped = supervisor.timedOut || supervisor.aborted;
    settleEnded({
      exitCode: stopped ? null : (exit?.code ?? null),
      exitSignal: stopped ? null : (exit?.signal ?? null),
      timedOut: supervisor.timedOut,
      aborted: supervisor.aborted,
      ...(spawnError === undefined ? {} : { spawnError }),
      ...captured(),
      elapsedMs: Date.now() - startedAt,
    });
    stdout?.release();
    stderr?.release();
  };

  child.on('error', (error) => {
    // only a failed spawn (no pid) ends it here; a later error (a failed kill) is not fatal
    if (pid !== null) return;
    spawnError = error.message;
    settleExited({ code: null, signal: null });
    finish();
  });
  child.once('exit', (code, signal) => {
    exit = { code, signal };
    supervisor.leaderExited();
    input.onExit?.(exit);
    settleExited(exit);
    // the pipes close once the group is dead; a process that left it may hold them: the wait for them is bounded
    // (unref'd: a caller waiting for the end holds the process through the pipes themselves)
    closeTimer = setTimeout(finish, input.closeGraceMs ?? CLOSE_GRACE_MS);
    closeTimer.unref();
  });
  child.once('close', finish);

  return {
    pid,
    child,
    get exit() {
      return exit;
    },
    exited,
    ended,
    captured,
    stop: () => {
      supervisor.stop();
      return ended;
    },
    kill: supervisor.kill,
  };
};

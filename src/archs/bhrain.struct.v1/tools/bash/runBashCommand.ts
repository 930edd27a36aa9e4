import { spawn } from 'node:child_process';

import type { BashRun } from './BashRun.js';
import { BoundedCapture } from './BoundedCapture.js';

// process groups still running, so they can be killed if this process exits while a command runs
const liveGroupPids = new Set<number>();
let exitHookInstalled = false;
const installExitHook = (): void => {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // a detached group does not get the terminal's signals, so it would outlive us without this
  process.once('exit', () => {
    for (const pid of liveGroupPids) killGroup(pid, 'SIGKILL');
  });
};

// signals a whole process group; a group that is already gone (ESRCH) is fine
const killGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to kill; EPERM cannot happen for our own children
  }
};

/**
 * .what = runs `bash -c <command>` in its own process group, with a timeout, bounded capture, and no survivors
 * .why = a model's command may hang, ignore SIGTERM, print gigabytes, or leave background children; none may hurt the loop
 */
export const runBashCommand = (
  input: { command: string; timeoutMs: number; maxCaptureBytes: number; killGraceMs: number },
  context: { cwd: string; env: Record<string, string | undefined>; signal?: AbortSignal },
): Promise<BashRun> =>
  new Promise<BashRun>((resolve) => {
    const startedAt = Date.now();
    const stdout = new BoundedCapture({ maxBytes: input.maxCaptureBytes });
    const stderr = new BoundedCapture({ maxBytes: input.maxCaptureBytes });
    const streamText = (capture: BoundedCapture) => ({ ...capture.read(), totalBytes: capture.totalBytes });
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let spawnError: string | undefined;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];

    const env = Object.fromEntries(
      Object.entries(context.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    // argv, never a concatenated string; stdin is /dev/null so a read gets EOF instead of hanging
    const child = spawn('bash', ['-c', input.command], {
      cwd: context.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) {
      installExitHook();
      liveGroupPids.add(pid);
    }

    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      context.signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) {
        // background children (`sleep 1000 &`) must not outlive the call
        killGroup(pid, 'SIGKILL');
        liveGroupPids.delete(pid);
      }
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        exitCode: timedOut || aborted ? null : (exit?.code ?? null),
        exitSignal: timedOut || aborted ? null : (exit?.signal ?? null),
        timedOut,
        aborted,
        spawnError,
        stdout: streamText(stdout),
        stderr: streamText(stderr),
        elapsedMs: Date.now() - startedAt,
      });
    };

    // SIGTERM first so well-behaved commands can clean up, then SIGKILL for those that trap or ignore it
    const terminate = (): void => {
      if (pid === undefined || exit) return;
      killGroup(pid, 'SIGTERM');
      timers.push(setTimeout(() => killGroup(pid, 'SIGKILL'), input.killGraceMs));
    };
    function onAbort(): void {
      if (exit || finished) return;
      aborted = true;
      terminate();
    }

    child.stdout.on('data', (chunk: Buffer) => stdout.write(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.write(chunk));
    child.on('error', (error) => {
      // only a failed spawn (no pid) ends the run here; a later error (a failed kill) is not fatal
      if (pid !== undefined) return;
      spawnError = error.message;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (pid !== undefined) killGroup(pid, 'SIGKILL');
      // the pipes close once the group is dead; a process that escaped the group (setsid) may hold them, so bound the wait
      timers.push(setTimeout(finish, input.killGraceMs));
    });
    child.on('close', finish);

    if (pid === undefined) return;
    timers.push(
      setTimeout(() => {
        if (exit) return;
        timedOut = true;
        terminate();
      }, input.timeoutMs),
    );
    if (context.signal?.aborted) onAbort();
    else context.signal?.addEventListener('abort', onAbort, { once: true });
  });

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

import type { BashRun } from './BashRun.js';
import { BoundedCapture } from './BoundedCapture.js';

/** every process a command starts inherits this variable, set to the run's own marker */
const RUN_MARKER_VAR = 'BHRAIN_BASH_RUN';

// process groups still running (with their runs' markers), so they can be killed if this process exits while a command runs
const liveGroupPids = new Map<number, string>();
let exitHookInstalled = false;
const installExitHook = (): void => {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // a detached group does not get the terminal's signals, so it would outlive us without this
  process.once('exit', () => {
    for (const [pid, marker] of liveGroupPids) {
      killGroup(pid, 'SIGKILL');
      killMarked(marker);
    }
  });
};

/**
 * .what = SIGKILLs every process whose environment carries this run's marker, until none is left (Linux, via /proc)
 * .why = `setsid cmd &` or a job under `set -m` leaves the process group, so killing the group misses it; the marker
 *        is inherited through fork and exec, so it finds them (only a process that clears its environment escapes)
 */
const killMarked = (marker: string): void => {
  if (process.platform !== 'linux') return;
  const needle = Buffer.from(`${RUN_MARKER_VAR}=${marker}\0`);
  // a process forking while we kill may add a child: a few rounds until a scan finds nobody
  for (let round = 0; round < 5; round++) {
    let found = 0;
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      let environ: Buffer;
      try {
        environ = readFileSync(`/proc/${entry}/environ`);
      } catch {
        continue;
      }
      const at = environ.indexOf(needle);
      if (at === -1 || (at > 0 && environ[at - 1] !== 0)) continue;
      try {
        process.kill(Number(entry), 'SIGKILL');
        found++;
      } catch {
        // already gone
      }
    }
    if (!found) return;
  }
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

    const marker = randomBytes(8).toString('hex');
    const env = {
      ...Object.fromEntries(Object.entries(context.env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      [RUN_MARKER_VAR]: marker,
    };
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
      liveGroupPids.set(pid, marker);
    }

    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      context.signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) {
        // background children (`sleep 1000 &`) must not outlive the call, nor those that left the group (setsid);
        // the exit handler already swept both, so the /proc scan runs again only if the process never reported exit
        if (!exit) {
          killGroup(pid, 'SIGKILL');
          killMarked(marker);
        }
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
      // a process that left the group may hold the pipes open: killing it now lets them close without the grace wait
      killMarked(marker);
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

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

import { killTagged } from './process/killTagged.js';
import { liveGroupsAtExit, signalGroup } from './process/signalGroup.js';
import type { BashCommand, BashRun, BashRunContext } from './BashRun.js';
import { BoundedCapture } from './BoundedCapture.js';

/** unsandboxed, every process a command starts inherits this variable, set to the call's own random value */
const BASH_TAG_ENV = 'BHRAIN_BASH_CALL';

/**
 * .what = runs `bash -c <command>` unconfined (the sandbox off) with a timeout, bounded capture, and no survivors: in
 *         its own process group, followed by a bounded /proc scan for the processes that left the group but carry the
 *         call's tag (killTagged)
 * .why = a model's command may hang, ignore SIGTERM, print gigabytes, or leave background children; none may hurt the loop
 */
export const runBashCommand = (input: BashCommand, context: BashRunContext): Promise<BashRun> =>
  new Promise<BashRun>((resolve) => {
    const startedAt = Date.now();
    const stdout = new BoundedCapture({ maxBytes: input.maxCaptureBytes, budget: input.captureBudget });
    const stderr = new BoundedCapture({ maxBytes: input.maxCaptureBytes, budget: input.captureBudget });
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let spawnError: string | undefined;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];

    // no pid namespace without the sandbox: the tag is what finds a process that left the group (setsid, set -m)
    const tag = { name: BASH_TAG_ENV, value: randomBytes(8).toString('hex') };
    // one scan per call: started when bash exits (freeing pipes an escaped process holds), awaited before the result
    let swept: Promise<unknown> | null = null;
    const sweep = (): Promise<unknown> => (swept ??= killTagged(tag));
    // argv, never a concatenated string; stdin is /dev/null so a read gets EOF instead of hanging; spawn leaves out
    // undefined values of env itself
    const child = spawn('bash', ['-c', input.command], {
      cwd: context.cwd,
      env: { ...context.env, [tag.name]: tag.value },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) liveGroupsAtExit.add(pid);

    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      context.signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) {
        // background children (`sleep 1000 &`) must not outlive the call
        if (!exit) signalGroup(pid, 'SIGKILL');
        liveGroupsAtExit.delete(pid);
      }
      for (const stream of child.stdio) stream?.destroy();
      const run: BashRun = {
        exitCode: timedOut || aborted ? null : (exit?.code ?? null),
        exitSignal: timedOut || aborted ? null : (exit?.signal ?? null),
        timedOut,
        aborted,
        spawnError,
        stdout: stdout.text(),
        stderr: stderr.text(),
        elapsedMs: Date.now() - startedAt,
      };
      stdout.release();
      stderr.release();
      // the call ends once nothing it started is left
      void sweep().then(() => resolve(run));
    };

    // SIGTERM first so well-behaved commands can clean up, then SIGKILL for those that trap or ignore it
    const terminate = (): void => {
      if (pid === undefined || exit) return;
      signalGroup(pid, 'SIGTERM');
      timers.push(setTimeout(() => signalGroup(pid, 'SIGKILL'), input.killGraceMs));
    };
    function onAbort(): void {
      if (exit || finished) return;
      aborted = true;
      terminate();
    }

    child.stdout?.on('data', (chunk: Buffer) => stdout.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.write(chunk));
    child.on('error', (error) => {
      // only a failed spawn (no pid) ends the run here; a later error (a failed kill) is not fatal
      if (pid !== undefined) return;
      spawnError = error.message;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (pid !== undefined) signalGroup(pid, 'SIGKILL');
      // the pipes close once the group is dead; unsandboxed, a process that left the group (setsid) may hold them: the
      // tag finds it now, and the wait is bounded for one that cleared its environment
      void sweep();
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

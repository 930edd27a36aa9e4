import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';

import { killTagged } from '../../../../security/killTagged.js';
import { liveGroupsAtExit, signalGroup } from '../../../../security/signalGroup.js';
import type { BashRun } from './BashRun.js';
import { BoundedCapture } from './BoundedCapture.js';
import type { CaptureBudget } from './CaptureBudget.js';
import { BWRAP_STATUS_FD, HANDOFF_END } from './genBwrapArgs.js';
import type { WaitingSandbox } from './WaitingSandbox.js';

/** unsandboxed, every process a command starts inherits this variable, set to the call's own random value */
const BASH_TAG_ENV = 'BHRAIN_BASH_CALL';

// signal names by number, to read bwrap's 128+n (it reports a command killed by signal n as that exit code);
// reversed so the first name wins where two share a number (SIGABRT before SIGIOT)
const SIGNAL_NAMES = new Map(Object.entries(constants.signals).reverse().map(([name, number]) => [number, name as NodeJS.Signals]));

/**
 * .what = runs `bash -c <command>` with a timeout, bounded capture, and no survivors: inside a bwrap sandbox when
 *         one is given (its own pid namespace: everything dies with bash), else in its own process group, followed by
 *         a bounded /proc scan for the processes that left the group but carry the call's tag (killTagged)
 * .why = a model's command may hang, ignore SIGTERM, print gigabytes, or leave background children; none may hurt the loop
 */
export const runBashCommand = (
  input: {
    command: string;
    timeoutMs: number;
    maxCaptureBytes: number;
    /** shared by every running call of the toolbox */
    captureBudget?: CaptureBudget;
    killGraceMs: number;
    /** a sandbox from startSandbox, not yet used (exited: false); absent when the sandbox is off */
    sandbox?: WaitingSandbox;
  },
  context: { cwd: string; env: Record<string, string | undefined>; signal?: AbortSignal },
): Promise<BashRun> =>
  new Promise<BashRun>((resolve) => {
    const startedAt = Date.now();
    const stdout = new BoundedCapture({ maxBytes: input.maxCaptureBytes, budget: input.captureBudget });
    const stderr = new BoundedCapture({ maxBytes: input.maxCaptureBytes, budget: input.captureBudget });
    const streamText = (capture: BoundedCapture) => ({ ...capture.read(), totalBytes: capture.totalBytes });
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let spawnError: string | undefined;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];
    // the sandbox's pid 1, as bwrap reports it; bash and its children share its process group
    let sandboxPid: number | undefined;

    // no pid namespace without the sandbox: the tag is what finds a process that left the group (setsid, set -m)
    const tag = input.sandbox ? null : { name: BASH_TAG_ENV, value: randomBytes(8).toString('hex') };
    // spawn leaves out undefined values itself
    const env = tag ? { ...context.env, [tag.name]: tag.value } : context.env;
    // one scan per call: started when bash exits (freeing pipes an escaped process holds), awaited before the result
    let swept: Promise<unknown> | null = null;
    const sweep = (): Promise<unknown> => (swept ??= tag ? killTagged(tag) : Promise.resolve());
    // argv, never a concatenated string; stdin is /dev/null so a read gets EOF instead of hanging (in the sandbox, the
    // handoff gives the command /dev/null once it has read the command from stdin)
    const child = input.sandbox ? input.sandbox.child : spawn('bash', ['-c', input.command], { cwd: context.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    if (pid !== undefined) {
      liveGroupsAtExit.add(pid);
    }
    if (input.sandbox) {
      // a sandbox that waited was kept from holding the process open; now its run does
      child.ref();
      for (const stream of child.stdio) (stream as { ref?: () => void } | null)?.ref?.();
      // a sandbox that died meanwhile refuses the write (EPIPE); its exit tells the run what happened
      child.stdin?.on('error', () => {});
      // the handoff reads the command up to HANDOFF_END
      child.stdin?.end(`${input.command}${HANDOFF_END}`);
    }
    let status = '';
    child.stdio[BWRAP_STATUS_FD]?.on('data', (chunk: Buffer) => {
      if (sandboxPid !== undefined || status.length > 64 * 1024) return;
      status += chunk.toString('utf8');
      const found = /"child-pid":\s*(\d+)/.exec(status);
      if (found) sandboxPid = Number(found[1]);
    });

    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      context.signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) {
        // background children (`sleep 1000 &`) must not outlive the call; in the sandbox they died with its pid 1 already
        if (!exit) killAll();
        liveGroupsAtExit.delete(pid);
      }
      for (const stream of child.stdio) stream?.destroy();
      // bwrap that ends before reporting a sandbox never ran the command: say why, in bwrap's words
      if (input.sandbox && sandboxPid === undefined && !spawnError && !timedOut && !aborted)
        spawnError = `the sandbox did not start (bwrap ${exit?.signal ? `killed by ${exit.signal}` : `exit ${exit?.code}`}): ${stderr.read().head.trim() || 'no message'}`;
      const ended = exitOf(exit);
      const run: BashRun = {
        exitCode: timedOut || aborted ? null : ended.code,
        exitSignal: timedOut || aborted ? null : ended.signal,
        timedOut,
        aborted,
        spawnError,
        stdout: streamText(stdout),
        stderr: streamText(stderr),
        elapsedMs: Date.now() - startedAt,
      };
      stdout.release();
      stderr.release();
      // the call ends once nothing it started is left
      void sweep().then(() => resolve(run));
    };

    // bwrap reports a command killed by signal n as exit 128+n, as bash does for its own children
    const exitOf = (ended: typeof exit): { code: number | null; signal: NodeJS.Signals | null } => {
      if (!ended) return { code: null, signal: null };
      const signal = input.sandbox && ended.code !== null && ended.code > 128 ? SIGNAL_NAMES.get(ended.code - 128) : undefined;
      return signal ? { code: null, signal } : ended;
    };

    // SIGKILL to bwrap's group and to the sandbox's pid 1: when pid 1 dies the kernel kills its whole namespace
    const killAll = (): void => {
      if (pid !== undefined) signalGroup(pid, 'SIGKILL');
      if (sandboxPid !== undefined) signalGroup(sandboxPid, 'SIGKILL');
    };

    // SIGTERM first so well-behaved commands can clean up, then SIGKILL for those that trap or ignore it
    const terminate = (): void => {
      if (pid === undefined || exit) return;
      // in the sandbox, bash's group is its pid 1's (pid 1 itself ignores SIGTERM); before bwrap reports it, bwrap's own
      signalGroup(sandboxPid ?? pid, 'SIGTERM');
      timers.push(setTimeout(killAll, input.killGraceMs));
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

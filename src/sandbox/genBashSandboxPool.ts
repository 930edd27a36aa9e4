import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { Server } from 'node:net';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';

import { liveGroupsAtExit, signalGroup } from '../process/signalGroup.js';
import { spawnGroup, type ChildGroup } from '../process/spawnGroup.js';
import { watchDeadline, type DeadlineCut } from '../process/watchDeadline.js';
import type { BashCommand, BashRun, BashRunContext } from './BashRun.js';
import { BoundedCapture } from '../process/BoundedCapture.js';
import {
  BWRAP_STATUS_FD,
  COMMAND_STDERR_FD,
  FIRST_DATA_FD,
  FORWARDER_CHANNEL_FD,
  SECCOMP_FILTER_FD,
  SUPERVISOR_EXECUTABLE_FD,
} from './genBwrapArgs.js';
import { FORWARDER_LISTENER_MESSAGE, FORWARDER_SERVED_MESSAGE } from './network/sandboxForwarder.js';

/**
 * .what = how to start a sandbox: bwrap, its arguments (genBwrapArgs), the host's bash the supervisor is copied from,
 *         the seccomp program bwrap installs, and the contents bwrap reads from fds FIRST_DATA_FD and on (sandboxDataFilesOf)
 */
export interface SandboxStart {
  bwrapPath: string;
  bwrapArgs: string[];
  bashPath: string;
  /** the program bwrap reads on SECCOMP_FILTER_FD (seccompFilterOfThisMachine) */
  seccompFilter: Uint8Array;
  /**
   * with the network by domain (genBwrapArgs' forwarder): what serves the listening socket the forwarder hands over
   * (the proxy's serve); a sandbox whose forwarder sends anything else is killed
   */
  serveForwarder?: (listener: Server) => void;
  /** what bwrap reads from the fds FIRST_DATA_FD and on, in order (genBwrapArgs' data files: hidden and redacted files) */
  data?: readonly string[];
}

/** the supervisor writes the exit status in this many digits, before the nonce that ends the command's stdout */
const STATUS_DIGITS = 3;

/** how long after bwrap's exit its streams may take to close before the call it ran ends without them */
const CLOSE_AFTER_EXIT_MS = 2_000;

/** how much of bwrap's and the supervisor's own stderr is kept, to say why a sandbox did not start or ended */
const MAX_DIAGNOSTIC_BYTES = 4 * 1024;

// signal names by number, to read the supervisor's 128+n (bash's status of a command killed by signal n); reversed so
// the first name wins where two share a number (SIGABRT before SIGIOT)
const SIGNAL_NAMES = new Map(
  Object.entries(constants.signals)
    .reverse()
    .map(([name, number]) => [number, name as NodeJS.Signals]),
);

/** .what = what a sandbox tells the call it runs */
interface SandboxCall {
  out: (chunk: Buffer) => void;
  err: (chunk: Buffer) => void;
  /** a channel ended while the call ran (before its nonce, since a call ends at both): it cannot end in order */
  broken: () => void;
  closed: () => void;
}

/** .what = one bwrap sandbox and its supervisor, serving one call at a time */
interface Sandbox {
  key: string;
  /** bwrap, leading its own group (spawnGroup): its exit kills the group, and bhrain's exit kills it */
  group: ChildGroup;
  /** the supervisor's pid on the host, as bwrap reports it; it is the sandbox's pid 1 */
  supervisorPid: number | undefined;
  /** set once it ended: everything in it is dead and its streams are closed */
  closed: boolean;
  /** why bwrap could not be started at all */
  spawnError?: string;
  /** the forwarder's listening socket, served by the proxy until the sandbox ends */
  listener: Server | null;
  /** why bhrain itself killed it, when it did: said in place of what bwrap said */
  killedWhy?: string;
  call: SandboxCall | null;
  idle: NodeJS.Timeout | null;
}

/** .what = why a sandbox ended, for the call it ran: bwrap's exit, and what it (or the spawn) said */
const describeEnd = (sandbox: Sandbox): string => {
  const exit = sandbox.group.exit;
  const { stderr } = sandbox.group.captured();
  const said = (sandbox.spawnError ?? sandbox.killedWhy ?? `${stderr.head}${stderr.tail}`).trim() || 'no message';
  return `(bwrap ${exit?.signal ? `killed by ${exit.signal}` : `exit ${exit?.code}`}): ${said}`;
};

/** .what = whether a sandbox can serve no call any more: bwrap exited, or never started */
const isGone = (sandbox: Sandbox): boolean => sandbox.group.exit !== null || sandbox.closed;

/** .what = kills a sandbox: bwrap's group, and its supervisor (pid 1: with it, the kernel kills the whole namespace) */
const killSandbox = (sandbox: Sandbox): void => {
  sandbox.group.kill();
  signalGroup(sandbox.supervisorPid, 'SIGKILL');
  if (sandbox.supervisorPid !== undefined) liveGroupsAtExit.delete(sandbox.supervisorPid);
};

/** .what = whether a sandbox holds the process open: only while a call runs in it */
const holdOpen = (sandbox: Sandbox, held: boolean): void => {
  const method = held ? 'ref' : 'unref';
  const { child } = sandbox.group;
  child[method]();
  // a stream already done with (a data pipe bwrap read at the start) is skipped: unref on a socket without a handle
  // would wait for a connect that never comes, one listener more at every call
  for (const stream of child.stdio)
    if (stream && !stream.destroyed) (stream as unknown as { ref?: () => void; unref?: () => void })[method]?.();
};

/**
 * .what = takes the forwarder's listening socket from the channel: the first message must be it, and `serve` then
 *         accepts the sandbox's connections on it; bhrain answers that it serves it (the forwarder exits on that, and
 *         the supervisor runs the first command), then closes the channel. Anything else kills the sandbox
 * .why = the channel is open only while the forwarder, started before any command, runs: nothing a command could
 *        write reaches it, and nothing after the listener is heard
 */
const receiveForwarder = (sandbox: Sandbox, serve: (listener: Server) => void): void => {
  const { child } = sandbox.group;
  const refuse = (why: string): void => {
    sandbox.killedWhy = why;
    killSandbox(sandbox);
  };
  child.once('message', (message: unknown, handle: unknown) => {
    if (message !== FORWARDER_LISTENER_MESSAGE || !(handle instanceof Server))
      return refuse(`the network forwarder sent ${JSON.stringify(message)} where its listener was due`);
    sandbox.listener = handle;
    try {
      serve(handle);
    } catch (error) {
      return refuse(`the proxy could not serve the network forwarder's listener: ${(error as Error).message}`);
    }
    // a sandbox that died meanwhile refuses the answer: its exit tells the call what happened
    child.send(FORWARDER_SERVED_MESSAGE, () => {
      if (child.connected) child.disconnect();
    });
  });
};

/**
 * .what = starts bwrap with its supervisor (spawnGroup), and routes what the sandbox writes to the call it runs
 * .why = the supervisor's executable is read by bwrap from an open file of the host's bash, so no copy of it is left on
 *        disk for a command (or anyone) to replace
 * .note = synchronous to the spawn: bwrap starts at the call, even while this process is busy (loading modules), and
 *         every listener is attached before any of its events can be heard
 */
const startSandbox = (key: string, start: SandboxStart, context: BashRunContext): Sandbox => {
  const executables: number[] = [];
  const openExecutable = (path: string): number => {
    const fd = openSync(path, 'r');
    executables.push(fd);
    return fd;
  };
  const data = start.data ?? [];
  const stdio: Array<'pipe' | 'ipc' | 'ignore' | number> = Array.from({ length: FIRST_DATA_FD + data.length }, () => 'pipe');
  // node's IPC: the forwarder sends its listening socket on it, before any command runs (then the supervisor closes it)
  stdio[FORWARDER_CHANNEL_FD] = start.serveForwarder ? 'ipc' : 'ignore';
  let sandbox: Sandbox;
  try {
    stdio[SUPERVISOR_EXECUTABLE_FD] = openExecutable(start.bashPath);
    // no deadline of its own: the sandbox outlives its calls, each of which bounds itself (run's terminate)
    const group = spawnGroup({
      command: start.bwrapPath,
      args: start.bwrapArgs,
      cwd: context.cwd,
      env: context.env,
      stdio,
      capture: { stderr: { maxBytes: MAX_DIAGNOSTIC_BYTES, keep: 'tail' } },
      killGraceMs: 0,
      // its streams close with everything in it; should one be held open anyway, a call it runs still ends
      closeGraceMs: CLOSE_AFTER_EXIT_MS,
      onExit: () => killSandbox(sandbox),
    });
    sandbox = { key, group, supervisorPid: undefined, closed: false, call: null, idle: null, listener: null };
  } finally {
    // the child holds its own copies from the spawn on
    for (const fd of executables) closeSync(fd);
  }
  const { child } = sandbox.group;
  // bwrap reads each to its end as it sets the sandbox up; one that died first refuses the write (EPIPE)
  const writeWhole = (fd: number, content: string | Uint8Array): void => {
    const stream = (child.stdio as Array<Writable | null>)[fd];
    stream?.on('error', () => {});
    // written whole, its pipe is done with
    stream?.end(content, () => stream.destroy());
  };
  writeWhole(SECCOMP_FILTER_FD, start.seccompFilter);
  data.forEach((text, index) => writeWhole(FIRST_DATA_FD + index, text));
  if (start.serveForwarder) receiveForwarder(sandbox, start.serveForwarder);
  // bwrap's status comes first: the supervisor's pid, a group of its own (--new-session)
  let status = '';
  child.stdio[BWRAP_STATUS_FD]?.on('data', (chunk: Buffer) => {
    if (sandbox.supervisorPid !== undefined || status.length > 64 * 1024) return;
    status += chunk.toString('utf8');
    const found = /"child-pid":\s*(\d+)/.exec(status);
    if (!found) return;
    sandbox.supervisorPid = Number(found[1]);
    liveGroupsAtExit.add(sandbox.supervisorPid);
  });
  // between calls nothing runs in the sandbox, so nothing may write; if something did, it is not trusted again
  const route = (stream: Readable | null | undefined, deliver: (call: SandboxCall, chunk: Buffer) => void): void => {
    stream?.on('data', (chunk: Buffer) => (sandbox.call ? deliver(sandbox.call, chunk) : killSandbox(sandbox)));
    stream?.on('end', () => sandbox.call?.broken());
  };
  route(child.stdout, (call, chunk) => call.out(chunk));
  route((child.stdio as Array<Readable | null>)[COMMAND_STDERR_FD], (call, chunk) => call.err(chunk));
  // a sandbox that died meanwhile refuses the write (EPIPE); its exit tells the call what happened
  child.stdin?.on('error', () => {});
  // a failed spawn (bwrap missing) ends at once: its error is what the call reports
  void sandbox.group.ended.then((end) => {
    sandbox.spawnError = end.spawnError;
    sandbox.closed = true;
    // its network namespace is gone with it: nothing connects to the listener any more
    sandbox.listener?.close();
    sandbox.call?.closed();
  });
  return sandbox;
};

/**
 * .what = passes a stream's bytes on to `write` until they end with the nonce; the prefixBytes before it are the
 *         supervisor's (the exit status), returned once it is seen; flush() passes on what was held back
 * .why = the nonce is written after every process of the call is dead, so it is the last thing on the stream; the bytes
 *        that could be the start of it are held back until the next chunk says whether they are
 */
const genEndScanner = (nonce: Buffer, prefixBytes: number, write: (bytes: Uint8Array) => void) => {
  const markerBytes = nonce.length + prefixBytes;
  let held: Buffer = Buffer.alloc(0);
  return {
    scan: (chunk: Buffer): string | null => {
      const bytes = held.length ? Buffer.concat([held, chunk]) : chunk;
      if (bytes.length >= markerBytes && bytes.subarray(bytes.length - nonce.length).equals(nonce)) {
        held = Buffer.alloc(0);
        write(bytes.subarray(0, bytes.length - markerBytes));
        return bytes.subarray(bytes.length - markerBytes, bytes.length - nonce.length).toString('latin1');
      }
      const keep = Math.min(markerBytes - 1, bytes.length);
      write(bytes.subarray(0, bytes.length - keep));
      held = Buffer.from(bytes.subarray(bytes.length - keep));
      return null;
    },
    flush: (): void => {
      write(held);
      held = Buffer.alloc(0);
    },
  };
};

/**
 * .what = runs bash commands in bubblewrap sandboxes kept between calls: a call takes an idle sandbox made for the
 *         same key (arguments, working directory, environment, the inodes it binds) or starts one; when the call ends
 *         in order the sandbox waits for the next call, unref'd, until idleMs pass; at most maxIdle wait
 * .why = a sandbox's start (a fork of this process, bwrap's namespaces and mounts) cost more than the rest of a short
 *        call; kept, a call costs a fork and exec of bash inside it. Calls at the same time each get a sandbox
 */
export const genBashSandboxPool = (options: { idleMs: number; maxIdle: number }) => {
  const idle: Sandbox[] = [];

  const discard = (sandbox: Sandbox): void => {
    if (sandbox.idle) clearTimeout(sandbox.idle);
    const at = idle.indexOf(sandbox);
    if (at >= 0) idle.splice(at, 1);
    killSandbox(sandbox);
    for (const stream of sandbox.group.child.stdio) stream?.destroy();
  };

  const release = (sandbox: Sandbox): void => {
    if (isGone(sandbox) || options.maxIdle < 1) return discard(sandbox);
    holdOpen(sandbox, false);
    sandbox.idle = setTimeout(() => discard(sandbox), options.idleMs);
    sandbox.idle.unref();
    idle.push(sandbox);
    while (idle.length > options.maxIdle) discard(idle[0]);
  };

  const take = (key: string): Sandbox | null => {
    for (const gone of idle.filter(isGone)) discard(gone);
    const at = idle.findIndex((sandbox) => sandbox.key === key);
    if (at < 0) return null;
    const [sandbox] = idle.splice(at, 1);
    if (sandbox.idle) clearTimeout(sandbox.idle);
    sandbox.idle = null;
    holdOpen(sandbox, true);
    return sandbox;
  };

  /** .what = runs one command; after SIGTERM (a timeout, an abort), killGraceMs until its sandbox is killed */
  const run = async (input: BashCommand & { key: string; start: SandboxStart }, context: BashRunContext): Promise<BashRun> => {
    const startedAt = Date.now();
    const sandbox = take(input.key) ?? startSandbox(input.key, input.start, context);
    return new Promise<BashRun>((resolve) => {
      const stdout = new BoundedCapture({ maxBytes: input.maxCaptureBytes, budget: input.captureBudget });
      const stderr = new BoundedCapture({ maxBytes: input.maxCaptureBytes, budget: input.captureBudget });
      const nonce = randomBytes(16).toString('hex');
      const nonceBytes = Buffer.from(nonce);
      const outEnd = genEndScanner(nonceBytes, STATUS_DIGITS, (bytes) => stdout.write(bytes));
      const errEnd = genEndScanner(nonceBytes, 0, (bytes) => stderr.write(bytes));
      let status: string | null = null;
      let errEnded = false;
      let cut: DeadlineCut | null = null;
      let finished = false;
      let stopWatching = (): void => {};
      let killTimer: NodeJS.Timeout | undefined;

      const finish = (): void => {
        if (finished) return;
        finished = true;
        stopWatching();
        clearTimeout(killTimer);
        const timedOut = cut === 'timeout';
        const aborted = cut === 'abort';
        sandbox.call = null;
        const inOrder = status !== null && errEnded;
        if (!inOrder) {
          outEnd.flush();
          errEnd.flush();
        }
        const code = inOrder ? Number(status) : null;
        const signal = code !== null && code > 128 ? (SIGNAL_NAMES.get(code - 128) ?? null) : null;
        const why = describeEnd(sandbox);
        const run: BashRun = {
          exitCode: timedOut || aborted || signal ? null : code,
          exitSignal: timedOut || aborted ? null : signal,
          timedOut,
          aborted,
          // the supervisor never reported: bwrap ended before the sandbox was made (or was not found)
          ...(sandbox.supervisorPid === undefined && !inOrder ? { spawnError: `the sandbox did not start ${why}` } : {}),
          ...(sandbox.supervisorPid !== undefined && !inOrder && !timedOut && !aborted
            ? { sandboxLost: `the sandbox ended while the command ran ${why}` }
            : {}),
          stdout: stdout.text(),
          stderr: stderr.text(),
          elapsedMs: Date.now() - startedAt,
        };
        stdout.release();
        stderr.release();
        if (inOrder) release(sandbox);
        else discard(sandbox);
        resolve(run);
      };

      sandbox.call = {
        out: (chunk) => {
          status ??= outEnd.scan(chunk);
          if (status !== null && errEnded) finish();
        },
        err: (chunk) => {
          errEnded ||= errEnd.scan(chunk) !== null;
          if (status !== null && errEnded) finish();
        },
        broken: () => killSandbox(sandbox),
        closed: finish,
      };
      // a sandbox that ended before it was taken (or failed to spawn) ends the call at once
      if (sandbox.closed) return finish();

      // SIGTERM to everything in the sandbox but its supervisor (its USR1 trap), then, after the grace, the sandbox
      stopWatching = watchDeadline({ timeoutMs: input.timeoutMs, signal: context.signal }, (why) => {
        cut = why;
        if (sandbox.supervisorPid !== undefined) {
          try {
            process.kill(sandbox.supervisorPid, 'SIGUSR1');
          } catch {
            // gone: its exit ends the call
          }
        }
        killTimer = setTimeout(() => killSandbox(sandbox), input.killGraceMs);
      });
      sandbox.group.child.stdin?.write(`${input.command}\0${nonce}\0`);
    });
  };

  return { run };
};

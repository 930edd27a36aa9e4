import { spawn, type ChildProcess } from 'node:child_process';

import { liveGroupsAtExit, signalGroup } from '../../../../security/signalGroup.js';

/** .what = a sandbox started before its command is known: bwrap, with bash inside waiting for the command on stdin */
export interface WaitingSandbox {
  child: ChildProcess;
  /** set once bwrap has exited, or failed to start: such a sandbox can run nothing */
  exited: boolean;
}

/**
 * .what = starts bwrap with the arguments of genBwrapArgs; the sandbox waits, idle, until runBashCommand hands it a command
 * .why = a sandbox costs a fork of this process and bwrap's namespace setup, more than a short command; started while the model is still
 *        answering, none of that is on the next call's path, and each call still gets a sandbox of its own
 */
export const startSandbox = (input: { bwrapPath: string; bwrapArgs: string[] }, context: { cwd: string; env: Record<string, string | undefined> }): WaitingSandbox => {
  // stdin carries the command (genBwrapArgs' handoff); fd 3 is bwrap's status
  const child = spawn(input.bwrapPath, input.bwrapArgs, { cwd: context.cwd, env: context.env, detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  const waiting: WaitingSandbox = { child, exited: false };
  // waiting, it must not hold the process open (runBashCommand refs it again)
  child.unref();
  for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
  child.once('exit', () => (waiting.exited = true));
  // a failed spawn (bwrap missing) is told to the run that takes it; until then it must not throw
  child.once('error', () => (waiting.exited = true));
  if (child.pid !== undefined) liveGroupsAtExit.add(child.pid);
  return waiting;
};

/** .what = kills a waiting sandbox that will run nothing: bwrap's group, and with it (--die-with-parent) the sandbox */
const discardSandbox = (waiting: WaitingSandbox): void => {
  const { pid } = waiting.child;
  if (pid !== undefined) {
    signalGroup(pid, 'SIGKILL');
    liveGroupsAtExit.delete(pid);
  }
  for (const stream of waiting.child.stdio) stream?.destroy();
};

/**
 * .what = holds at most one sandbox started ahead of the next call, with what it was made for (its key); a call takes
 *         it only when its own key is the same, and one that is not taken is killed after idleMs
 * .why = the sandbox's start (a fork, bwrap's namespaces) overlaps the model's answer instead of adding to each call
 */
export const genWaitingSandboxes = (options: { idleMs: number }) => {
  let waiting: { key: string; sandbox: WaitingSandbox; idle: NodeJS.Timeout } | null = null;
  const take = (key: string): WaitingSandbox | null => {
    const found = waiting;
    waiting = null;
    if (!found) return null;
    clearTimeout(found.idle);
    if (found.key === key && !found.sandbox.exited) return found.sandbox;
    discardSandbox(found.sandbox);
    return null;
  };
  const prepare = (key: string, start: () => WaitingSandbox): void => {
    if (waiting) return;
    const sandbox = start();
    const idle = setTimeout(() => {
      if (waiting?.sandbox !== sandbox) return;
      waiting = null;
      discardSandbox(sandbox);
    }, options.idleMs);
    idle.unref();
    waiting = { key, sandbox, idle };
  };
  return { take, prepare };
};


import { liveGroupsAtExit, signalGroup } from './signalGroup.js';
import { watchDeadline } from './watchDeadline.js';

/**
 * .what = what watches one process group while its leader runs: its deadline, its stop (SIGTERM, SIGKILL after the
 *         grace), and its end (everything left in the group SIGKILLed once the leader exited)
 * .why = the one lifecycle of every group bhrain starts, whether through spawnGroup or a pseudo-terminal's own fork
 */
export interface GroupSupervisor {
  /** whether the timeout stopped the group */
  readonly timedOut: boolean;
  /** whether the caller's signal stopped the group */
  readonly aborted: boolean;
  /** SIGTERM to the group, SIGKILL after the grace (at once when it is 0); nothing once the leader exited */
  stop: () => void;
  /** SIGKILL to the group now */
  kill: () => void;
  /** to call when the leader exited: the rest of its group is SIGKILLed, the timers stop, the exit hook forgets it */
  leaderExited: () => void;
}

/**
 * .what = supervises the process group led by pid (a detached child, or a PTY's session leader): it is SIGKILLed if
 *         bhrain exits first (liveGroupsAtExit), stopped at timeoutMs or when the signal aborts, and whatever it holds
 *         is SIGKILLed once the leader exits; a null pid (a failed spawn) is never signalled
 * .why = a detached group gets no terminal signals and no parent's death: without this, a child's children (a bash
 *        background job, npx → node, a Claude Code tool) would outlive the call, the server, or bhrain itself
 */
export const superviseGroup = (input: {
  pid: number | null;
  killGraceMs: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}): GroupSupervisor => {
  const { pid } = input;
  let running = pid !== null;
  let timedOut = false;
  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  if (running) liveGroupsAtExit.add(pid!);

  const kill = (): void => signalGroup(pid, 'SIGKILL');
  // SIGTERM first so a well-behaved child can clean up, then SIGKILL for one that traps or ignores it
  const stop = (): void => {
    if (!running) return;
    if (input.killGraceMs <= 0) return kill();
    signalGroup(pid, 'SIGTERM');
    killTimer ??= setTimeout(kill, input.killGraceMs);
  };
  // a failed spawn has nothing to stop: no timer may hold the process open for it
  const stopWatching = running
    ? watchDeadline({ timeoutMs: input.timeoutMs, signal: input.signal }, (why) => {
        if (why === 'timeout') timedOut = true;
        else aborted = true;
        stop();
      })
    : () => {};
  return {
    get timedOut() {
      return timedOut;
    },
    get aborted() {
      return aborted;
    },
    stop,
    kill,
    leaderExited: () => {
      stopWatching();
      clearTimeout(killTimer);
      if (!running) return;
      running = false;
      // background children (`sleep 1000 &`) must not outlive the leader
      kill();
      liveGroupsAtExit.delete(pid!);
    },
  };
};

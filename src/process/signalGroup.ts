/**
 * .what = signals a whole process group, ignoring one that is already gone (ESRCH)
 * .why = the one place bhrain signals a group: a pid <= 1 would mean every process (-1) or init's group (1), and a
 *        failed spawn's missing pid must never become one, so it is refused here
 */
export const signalGroup = (pid: number | null | undefined, signal: NodeJS.Signals): void => {
  if (pid === null || pid === undefined || !Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to kill; EPERM cannot happen for our own children
  }
};

// detached groups still running, SIGKILLed if this process exits first
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * .what = remembers a detached process group to SIGKILL if this process exits while it runs; forget it once it is gone
 * .why = a detached group does not get the terminal's signals, so without this it would outlive us
 */
export const liveGroupsAtExit = {
  add: (pid: number): void => {
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const live of liveGroups) signalGroup(live, 'SIGKILL');
      });
    }
    liveGroups.add(pid);
  },
  delete: (pid: number): void => void liveGroups.delete(pid),
};

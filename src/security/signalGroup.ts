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

import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** .what = the directory every process's default spill dirs sit in, one per pid (read at each call: TMPDIR may change) */
const spillRoot = (): string => join(tmpdir(), 'bhrain-tool-output');

// whether this process has already swept the dead holders' dirs and set its own dir's removal at exit
let held = false;

/** .what = whether a process with this pid lives (EPERM: it lives, as another user) */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** .what = removes the shared root when no process holds a dir in it any more (gone already: nothing to do) */
const removeIfEmpty = (root: string): void => {
  try {
    rmdirSync(root);
  } catch (error) {
    if (!['ENOTEMPTY', 'EEXIST', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
};

/**
 * .what = removes the spill dirs of processes that no longer live: what a holder killed before it could exit left
 * .why = the next holder sweeps them (genDefaultSpillDir), and so does a test suite's teardown, whose workers may be
 *        killed rather than exit
 */
export const sweepDeadSpillHolders = (): void => {
  const root = spillRoot();
  const holders = (() => {
    try {
      return readdirSync(root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []; // no root yet: nothing to sweep
      throw error;
    }
  })();
  for (const name of holders) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid))
      rmSync(join(root, name), { recursive: true, force: true });
  }
  removeIfEmpty(root);
};

/**
 * .what = the spill dir of a library session that was given none: `<tmp>/bhrain-tool-output/<pid>/<session uuid>`.
 *         The first call in a process removes the dirs of processes that no longer live, and sets this process's dir
 *         to be removed when it exits
 * .why = the model may read a spill file in a later ask of the same process, so it stays while the process lives; a
 *        library process never closes anything at its end, and one that is killed never exits cleanly, so the next
 *        holder removes what the dead left (the CLI spills into its run record instead)
 */
export const genDefaultSpillDir = (uuid: string): string => {
  const root = spillRoot();
  const own = join(root, String(process.pid));
  if (!held) {
    held = true;
    sweepDeadSpillHolders();
    process.once('exit', () => {
      rmSync(own, { recursive: true, force: true });
      removeIfEmpty(root);
    });
  }
  return join(own, uuid);
};

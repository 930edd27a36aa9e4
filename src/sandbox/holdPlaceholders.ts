import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * .what = where each process that holds a placeholder says so: one directory per placeholder path, one file per pid
 * .why = two bhrain processes in the same workspace share a placeholder; the last to let go removes it, not the first
 */
const registryOf = (path: string): string =>
  join(tmpdir(), `bhrain-placeholder-${createHash('sha256').update(path).digest('hex').slice(0, 32)}`);

/** holds per placeholder path in this process: one per sandbox that binds it */
const holds = new Map<string, number>();

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** .what = whether an empty directory is a placeholder another process made (alive, or dead and left it) */
export const isPlaceholderOfAnyone = (path: string): boolean => {
  // a stat that finds nothing costs no Error: this runs on every bash call, for each protected directory there is
  if (!holds.has(path) && !statSync(registryOf(path), { throwIfNoEntry: false })) return false;
  try {
    // one written into (a write the user approved) holds what it holds: it is bound as it is
    return (holds.has(path) || readdirSync(registryOf(path)).length > 0) && readdirSync(path).length === 0;
  } catch {
    return false;
  }
};

const release = (path: string): void => {
  const count = (holds.get(path) ?? 1) - 1;
  if (count > 0) return void holds.set(path, count);
  holds.delete(path);
  const registry = registryOf(path);
  rmSync(join(registry, String(process.pid)), { force: true });
  let others: string[] = [];
  try {
    others = readdirSync(registry);
  } catch {
    // no registry left: nobody else holds it
  }
  for (const pid of others) if (!isAlive(Number(pid))) rmSync(join(registry, pid), { force: true });
  if (others.some((pid) => isAlive(Number(pid)))) return;
  // only an empty directory: anything else there is not ours to remove
  for (const remove of [() => rmdirSync(path), () => rmdirSync(registry)])
    try {
      remove();
    } catch {
      // gone, no longer empty, or no longer a directory: left as it is
    }
};

/**
 * .what = makes each path an empty directory to bind read-only in the sandbox (a mount point for a protected path that
 *         does not exist yet), held until the returned release is called; the last holder removes it
 * .why = bubblewrap needs something at a path to mount over it, and that something is on the host: an empty directory
 *        is what git, `ls` and an editor ignore best, and it is removed when the sandbox ends, so a run leaves none. A
 *        dead holder's entry (a run killed with SIGKILL) is dropped, and its placeholder removed, by the next run that
 *        holds the same path
 */
export const holdPlaceholders = (paths: readonly string[]): (() => void) => {
  for (const path of paths) {
    const count = holds.get(path) ?? 0;
    holds.set(path, count + 1);
    if (count) continue;
    const registry = registryOf(path);
    mkdirSync(registry, { recursive: true });
    writeFileSync(join(registry, String(process.pid)), '');
    try {
      mkdirSync(path);
    } catch (error) {
      // already there: another holder's placeholder, or one a dead holder left; bwrap reports anything else
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const path of paths) release(path);
  };
};

// a process that exits with sandboxes alive (bwrap dies with it) lets go of their placeholders on its way out
process.once('exit', () => {
  for (const [path, count] of [...holds]) for (let index = 0; index < count; index++) release(path);
});

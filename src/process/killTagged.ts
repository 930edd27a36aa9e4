import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** a scan reads at most this many /proc entries, so its cost stays bounded on a machine running many processes */
const MAX_SCAN_ENTRIES = 20_000;

/** rounds of scan-and-kill: a process forking while its parent is killed may leave a child the next round finds */
const ROUNDS = 3;

/**
 * entries read between two turns of the event loop: a machine's few hundred processes in one or two slices. Read one
 * by one, synchronously, an entry costs a few µs; each asynchronous read was a round trip through libuv's four-thread
 * pool, which made a scan of ~150 entries cost ~10 ms, more than a call in the sandbox
 */
const SLICE_ENTRIES = 500;

/** .what = the pids among `names` whose environment holds the needle; the loop turns between slices */
const findTagged = async (names: readonly string[], needle: Buffer): Promise<number[]> => {
  const tagged: number[] = [];
  for (let start = 0; start < names.length; start += SLICE_ENTRIES) {
    if (start > 0) await nextTurn();
    for (const name of names.slice(start, start + SLICE_ENTRIES)) {
      try {
        if (readFileSync(`/proc/${name}/environ`).includes(needle)) tagged.push(Number(name));
      } catch {
        // exited, or another user's
      }
    }
  }
  return tagged;
};

/**
 * .what = SIGKILLs every process whose environment carries `<name>=<value>`, found through /proc (Linux; elsewhere
 *         nothing); resolves to how many it signalled
 * .why = a process that leaves its process group (setsid, a job under `set -m`) or outlives its parent is outside any
 *        group bhrain can signal; the tag it inherited still ties it to what started it. Only a process that clears its
 *        environment escapes. Used where no pid namespace does the job: bash with the sandbox off, the claude CLI's tools
 */
export const killTagged = async (tag: { name: string; value: string }): Promise<number> => {
  if (process.platform !== 'linux') return 0;
  const needle = Buffer.from(`${tag.name}=${tag.value}\0`);
  let killed = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const names = (await readdir('/proc').catch(() => [] as string[]))
      .filter((name) => /^\d+$/.test(name) && Number(name) > 1 && Number(name) !== process.pid)
      .slice(0, MAX_SCAN_ENTRIES);
    const tagged = await findTagged(names, needle);
    if (!tagged.length) break;
    for (const pid of tagged) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    killed += tagged.length;
  }
  return killed;
};

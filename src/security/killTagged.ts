import { readdir, readFile } from 'node:fs/promises';

/** a scan reads at most this many /proc entries, so its cost stays bounded on a machine running many processes */
const MAX_SCAN_ENTRIES = 20_000;

/** rounds of scan-and-kill: a process forking while its parent is killed may leave a child the next round finds */
const ROUNDS = 3;

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
    const found = await Promise.all(names.map(async (name) => ((await readFile(`/proc/${name}/environ`).catch(() => null))?.includes(needle) ? Number(name) : null)));
    const tagged = found.filter((pid): pid is number => pid !== null);
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

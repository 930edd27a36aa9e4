import { readdirSync, readFileSync } from 'node:fs';

/** .what = a process seen from the host's /proc */
export interface LivingProcess {
  pid: number;
  cmdline: string;
}

/**
 * .what = the living processes (not zombies, not this one) whose command line contains a text, seen from the host's /proc
 * .why = a test proves nothing outlived a call by looking for what it started: a unique text (uniqueSeconds) in its
 *        command line finds it wherever it went (another group, another session, a pid namespace)
 */
export const findLivingProcesses = (text: string): LivingProcess[] =>
  readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return [];
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (!cmdline.includes(text)) return [];
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z' ? [] : [{ pid: Number(entry), cmdline }];
    } catch {
      return []; // gone while we looked
    }
  });

/** .what = a sleep duration in seconds no other process uses, so the processes of one case can be found and counted */
export const uniqueSeconds = (): string => String(800_000 + Math.floor(Math.random() * 199_999));

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** .what = one measured process run: wall time, peak RSS of its whole process tree, exit, output */
export interface MeasuredRun {
  wallMs: number;
  peakRssMb: number;
  code: number | null;
  stdout: string;
  stderr: string;
  startedAt: number;
}

/** .what = the processes a process started and that still run: the children of each of its threads */
const childrenOf = (pid: number): number[] => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    // exited
    return [];
  }
};

/**
 * .what = a process's peak resident memory (VmHWM) in kB, and where its image lies (start and end of code, start of
 *         stack, from /proc/<pid>/stat, read before and after the peak), or null when it has exited
 * .why = a child that execs between the reads has its parent's peak in one and its own image in the other: its image
 *        is given as null (unknown) then, and it is not counted in that sample
 */
const memoryOf = (pid: number): { peakKb: number; image: string | null } | null => {
  // the fields after the command name, which may itself hold spaces and parentheses: state is field 3, startcode 26
  const imageOf = (stat: string) =>
    stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .slice(23, 26)
      .join(' ');
  try {
    const before = imageOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const after = imageOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return { peakKb: Number(/^VmHWM:\s*(\d+) kB$/m.exec(status)?.[1] ?? 0), image: before === after ? after : null };
  } catch {
    // exited
    return null;
  }
};

/**
 * .what = the sum of the peak resident memory (VmHWM) of each process living in a tree now, in bytes, walked down from
 *         its root through each thread's children list; a child still in its parent's image is counted with it
 * .why = a few files per process of the tree, not all of /proc: a sample runs on the event loop that serves the stand-in,
 *        and must not delay the model's answers (reading all of /proc took milliseconds per sample). Each process's own
 *        peak, not its RSS now: a peak shorter than the sampling interval (Claude Code's main process has one) is seen
 *        in every run, not in some, so the ratio reproduces; the sum may add peaks of different moments, so it can
 *        only overstate the tree's peak, by as much as its small processes' peaks.
 *        A child between its fork (or vfork, posix_spawn: Claude Code's spawns) and its exec runs in its parent's
 *        memory, shared or copied on write, and reads as big as its parent; its code and stack lie where its parent's
 *        do, which an exec (address-space randomization) moves. Counted twice, a sample that fell in that window read
 *        Claude Code's 20-step peak as ~550 MB instead of ~280 MB, in about half the runs
 */
export const treePeakBytes = (root: number): number => {
  let kb = 0;
  const seen = new Set<number>();
  for (const pending: Array<{ pid: number; parentImage: string | null }> = [{ pid: root, parentImage: null }]; pending.length;) {
    const { pid, parentImage } = pending.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const memory = memoryOf(pid);
    if (memory && memory.image !== null && memory.image !== parentImage) kb += memory.peakKb;
    pending.push(...childrenOf(pid).map((child) => ({ pid: child, parentImage: memory?.image ?? null })));
  }
  return kb * 1024;
};

/**
 * .what = runs a command to completion, sampling its process tree's peak RSS every 20 ms unless told not to (peakRssMb 0)
 * .why = agent CLIs relaunch themselves or spawn shells: the tree, not the first pid, is what a user pays for. A sample
 *        runs on this process's event loop, which also serves the stand-in: a run timed for its wall alone (one turn,
 *        the slope's tasks) is not sampled, so nothing of the sampling can delay its model's answers
 */
export const runMeasured = (input: {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  timeoutMs: number;
  sampleRss?: boolean;
}): Promise<MeasuredRun> =>
  new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const started = performance.now();
    const child = spawn(input.command, input.args, {
      cwd: input.cwd,
      env: input.env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const sample = () => {
      if (child.pid) peak = Math.max(peak, treePeakBytes(child.pid));
    };
    // an unsampled run gets no timer at all: nothing of the sampler wakes the event loop that serves the stand-in
    const sampler = input.sampleRss === false ? undefined : setInterval(sample, 20);
    const timer = setTimeout(() => child.kill('SIGKILL'), input.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sampler);
      clearTimeout(timer);
      resolve({ wallMs: performance.now() - started, peakRssMb: peak / 1024 / 1024, code, stdout, stderr, startedAt });
    });
    if (sampler) sample();
  });

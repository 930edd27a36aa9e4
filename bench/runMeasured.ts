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
 * .what = the sum of the peak resident memory (VmHWM) of each process living in a tree now, in bytes, walked down from
 *         its root through each thread's children list
 * .why = a few files per process of the tree, not all of /proc: a sample runs on the event loop that serves the stand-in,
 *        and must not delay the model's answers (reading all of /proc took milliseconds per sample). Each process's own
 *        peak, not its RSS now: a peak shorter than the sampling interval (Claude Code's main process has one) is seen
 *        in every run, not in some, so the ratio reproduces; the sum may add peaks of different moments, so it can
 *        only overstate the tree's peak, by as much as its small processes' peaks
 */
export const treePeakBytes = (root: number): number => {
  let bytes = 0;
  const seen = new Set<number>();
  for (const pending = [root]; pending.length; ) {
    const pid = pending.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      bytes += Number(/^VmHWM:\s*(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // exited
    }
    pending.push(...childrenOf(pid));
  }
  return bytes;
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
    const child = spawn(input.command, input.args, { cwd: input.cwd, env: input.env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
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

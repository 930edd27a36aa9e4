import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { genBashToolBox, type BhrainToolBox, type BrainLog } from 'rhachet-roles-bhrain';

import { median, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';

/** timed calls per mode in a full run; the modes alternate, so drift in the machine's load hits both alike */
const FULL_RUNS = 41;

/** the target: the sandbox costs at most this much per call */
const TARGET_OVERHEAD_MS = 15;

const silentLog: BrainLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** .what = the value at a fraction of the sorted values (nearest rank), rounded to 0.1 */
const percentile = (values: readonly number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]! * 10) / 10;
};

const round = (value: number): number => Math.round(value * 10) / 10;

/** .what = one bash call through the toolbox, timed end to end (spawn, sandbox setup, exit, format) */
const timeCall = async (box: BhrainToolBox, cwd: string): Promise<number> => {
  const started = performance.now();
  const result = await box.execute({ call: { id: 'bench-bash', name: 'bash', input: { command: 'true' } } }, { cwd, log: silentLog, env: process.env });
  const elapsedMs = performance.now() - started;
  if (!result.success) throw new Error(`bash true failed: ${result.output}`);
  return elapsedMs;
};

/**
 * .what = sandbox section: the wall time of one bash `true` call with the sandbox off vs workspace-write (bubblewrap)
 * .why = the target: bash in the sandbox costs at most 15 ms more per call than unconfined
 */
export const benchSandbox = async (options: BenchOptions): Promise<BenchSection> => {
  const runs = options.smoke ? 3 : FULL_RUNS;
  const cwd = await mkdtemp(join(tmpdir(), 'bhrain-bench-sandbox-'));
  const boxes = { off: genBashToolBox({ sandbox: { mode: 'off' } }), 'workspace-write': genBashToolBox({ sandbox: { mode: 'workspace-write' } }) };
  const times: Record<keyof typeof boxes, number[]> = { off: [], 'workspace-write': [] };
  let unavailable: string | null = null;
  try {
    // untimed warm-up: the first sandboxed call finds bwrap and proves it can create namespaces (once per process)
    for (const box of Object.values(boxes)) await timeCall(box, cwd);
    for (let run = 0; run < runs; run++)
      for (const mode of run % 2 ? (['workspace-write', 'off'] as const) : (['off', 'workspace-write'] as const))
        times[mode].push(await timeCall(boxes[mode], cwd));
  } catch (error) {
    unavailable = (error as Error).message;
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
  const medianOf = (mode: keyof typeof boxes): number | null => (unavailable ? null : round(median(times[mode])!));
  const off = medianOf('off');
  const sandboxed = medianOf('workspace-write');
  const overheadMs = off === null || sandboxed === null ? null : round(sandboxed - off);
  options.log(`sandbox: bash true ${off ?? '-'} ms off, ${sandboxed ?? '-'} ms workspace-write (${runs} run(s) each)`);
  const at = (mode: keyof typeof boxes, fraction: number): number | null => (unavailable ? null : percentile(times[mode], fraction));
  const rows: BenchRow[] = [
    { metric: 'bash `true`: wall time per call, median', unit: 'ms', values: { off, 'workspace-write': sandboxed } },
    { metric: 'bash `true`: wall time per call, p10', unit: 'ms', values: { off: at('off', 0.1), 'workspace-write': at('workspace-write', 0.1) } },
    { metric: 'bash `true`: wall time per call, p90', unit: 'ms', values: { off: at('off', 0.9), 'workspace-write': at('workspace-write', 0.9) } },
    {
      metric: 'sandbox overhead per call (difference of medians)',
      unit: 'ms',
      values: { 'workspace-write - off': overheadMs },
      target: { text: `<= ${TARGET_OVERHEAD_MS} ms per call`, met: overheadMs === null ? null : overheadMs <= TARGET_OVERHEAD_MS },
    },
  ];
  const notes = [
    `Each call is genBashToolBox's execute of \`true\`, end to end (spawn, sandbox setup, exit, format); ${runs} timed call(s) per mode, alternating off / workspace-write after one untimed warm-up each (the warm-up pays the one-time bwrap lookup and namespace probe).`,
  ];
  if (unavailable) notes.push(`the sandbox could not run here, so nothing was measured: ${unavailable}`);
  return { title: 'Sandbox: bash per-call cost, off vs workspace-write (bubblewrap)', rows, notes };
};

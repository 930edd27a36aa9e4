import { cpus, totalmem } from 'node:os';

import type { BenchOptions, BenchReport, BenchSection } from './BenchReport.js';
import { benchCompaction } from './sections/compaction.js';
import { benchHarness } from './sections/harness.js';
import { benchLoop } from './sections/loop.js';
import { benchSandbox } from './sections/sandbox.js';
import { benchTools } from './sections/tools.js';

/** the sections in the order they print */
export const BENCH_SECTIONS: Array<(options: BenchOptions) => Promise<BenchSection>> = [benchHarness, benchLoop, benchCompaction, benchTools, benchSandbox];

/**
 * .what = runs every section and gathers the report
 * .why = one run measures bhrain and its peers on the same stand-in and the same machine, so ratios are fair
 */
export const runBench = async (options: BenchOptions): Promise<BenchReport> => {
  const started = performance.now();
  const sections: BenchSection[] = [];
  for (const section of BENCH_SECTIONS) sections.push(await section(options));
  return {
    date: new Date().toISOString(),
    machine: {
      cpu: cpus()[0]?.model.trim() ?? 'unknown cpu',
      cores: cpus().length,
      memoryGb: Math.round(totalmem() / 1024 ** 3),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
    smoke: options.smoke,
    sections,
    elapsedMs: performance.now() - started,
  };
};

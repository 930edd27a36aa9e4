import { cpus, totalmem } from 'node:os';

import type { BenchOptions, BenchReport, BenchSection } from './BenchReport.js';
import { benchBrainCli } from './sections/brainCli.js';
import { benchCheckpoint } from './sections/checkpoint.js';
import { benchCompaction } from './sections/compaction.js';
import { benchFleet } from './sections/fleet.js';
import { benchHarness } from './sections/harness.js';
import { benchLoop } from './sections/loop.js';
import { benchMcp } from './sections/mcp.js';
import { benchOneTurn } from './sections/oneTurn.js';
import { benchSandbox } from './sections/sandbox.js';
import { benchTools } from './sections/tools.js';

/** the sections by name (`--only <name>`), in the order they print */
export const BENCH_SECTIONS: Record<string, (options: BenchOptions) => Promise<BenchSection>> = {
  oneTurn: benchOneTurn,
  harness: benchHarness,
  loop: benchLoop,
  compaction: benchCompaction,
  tools: benchTools,
  checkpoint: benchCheckpoint,
  sandbox: benchSandbox,
  brainCli: benchBrainCli,
  mcp: benchMcp,
  fleet: benchFleet,
};

/**
 * .what = runs every section and gathers the report
 * .why = one run measures bhrain and its peers on the same stand-in and the same machine, so ratios are fair
 */
export const runBench = async (options: BenchOptions & { only?: string }): Promise<BenchReport> => {
  const started = performance.now();
  if (options.only !== undefined && !BENCH_SECTIONS[options.only])
    throw new Error(`unknown bench section '${options.only}' for --only: choose one of ${Object.keys(BENCH_SECTIONS).join(', ')}`);
  const sections: BenchSection[] = [];
  for (const [name, section] of Object.entries(BENCH_SECTIONS))
    if (options.only === undefined || options.only === name) sections.push(await section(options));
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

// issue 18 bench: peak RSS is the whole process tree's, found by walking down each thread's /proc children list
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';

import { runMeasured, treePeakBytes } from './runMeasured.js';

// a node that holds 80 MB of touched memory for a while
const HOLDER = `node -e "const held = Buffer.alloc(80e6, 1); setTimeout(() => held.length, 800)"`;

describe('issue 18 bench: peak RSS of the process tree', () => {
  it('then grandchildren count, under a nested bash and in a bubblewrap pid namespace: two 80 MB holders put the tree past 160 MB', async () => {
    const run = await runMeasured({
      command: 'bash',
      // a bash that waits on its node (a grandchild), beside bwrap's pid namespace (bwrap, its init, then node)
      args: ['-c', `bash -c '${HOLDER}; true' & bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid -- ${HOLDER}; wait`],
      env: { PATH: process.env.PATH },
      cwd: tmpdir(),
      timeoutMs: 20_000,
    });
    expect(run.code).toBe(0);
    expect(run.peakRssMb).toBeGreaterThan(160);
  });

  it('then a peak already gone when a sample is taken still counts: 150 MB held, freed, then the tree is sampled', async () => {
    const child = spawn(process.execPath, ['--expose-gc', '-e', 'let held = Buffer.alloc(150e6, 1); held = null; gc(); console.log("freed"); setTimeout(() => {}, 5000)'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve) => child.stdout.once('data', resolve));
      const rssNowMb = Number(/^VmRSS:\s*(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
      expect({ rssNowBelow100Mb: rssNowMb < 100, peakAbove150Mb: treePeakBytes(child.pid!) / 1024 / 1024 > 150 }).toEqual({ rssNowBelow100Mb: true, peakAbove150Mb: true });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('then an unsampled run reports no RSS', async () => {
    const run = await runMeasured({ command: 'bash', args: ['-c', HOLDER], env: { PATH: process.env.PATH }, cwd: tmpdir(), timeoutMs: 20_000, sampleRss: false });
    expect({ code: run.code, peakRssMb: run.peakRssMb }).toEqual({ code: 0, peakRssMb: 0 });
  });
});

// bench: peak RSS is the whole process tree's, found by walking down each thread's /proc children list
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genPeers } from './peers.js';
import { runMeasured, treePeakBytes } from './runMeasured.js';
import { genTaskModel, genTaskPrompt } from './sections/harness.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();

// a node that holds 80 MB of touched memory for a while
const HOLDER = `node -e "const held = Buffer.alloc(80e6, 1); setTimeout(() => held.length, 800)"`;

describe('bench: peak RSS of the process tree', () => {
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
    const child = spawn(
      process.execPath,
      ['--expose-gc', '-e', 'let held = Buffer.alloc(150e6, 1); held = null; gc(); console.log("freed"); setTimeout(() => {}, 5000)'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((resolve) => child.stdout.once('data', resolve));
      const rssNowMb = Number(/^VmRSS:\s*(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
      expect({ rssNowBelow100Mb: rssNowMb < 100, peakAbove150Mb: treePeakBytes(child.pid!) / 1024 / 1024 > 150 }).toEqual({
        rssNowBelow100Mb: true,
        peakAbove150Mb: true,
      });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('then an unsampled run reports no RSS', async () => {
    const run = await runMeasured({
      command: 'bash',
      args: ['-c', HOLDER],
      env: { PATH: process.env.PATH },
      cwd: tmpdir(),
      timeoutMs: 20_000,
      sampleRss: false,
    });
    expect({ code: run.code, peakRssMb: run.peakRssMb }).toEqual({ code: 0, peakRssMb: 0 });
  });

  it("then a child in its parent's memory is counted once: Claude Code's spawns (vfork), sampled every 2 ms over 10 bash steps, never read as two of it", async () => {
    const claude = genPeers().find((peer) => peer.name === 'claude code')!;
    expect(claude.unavailable).toBeNull();
    const steps = 10;
    standin().respond = genTaskModel(claude, steps);
    const home = tempDir('bhrain-bench-home-');
    const cwd = tempDir('bhrain-bench-cwd-');
    try {
      const task = claude.task({ prompt: genTaskPrompt(steps), standinUrl: standin().url, home });
      const child = spawn(task.command, task.args, { cwd, env: task.env as NodeJS.ProcessEnv, stdio: 'ignore' });
      // each sample: the tree's sum against the main process's own peak (its bash children add a few MB)
      const samples: Array<{ tree: number; main: number }> = [];
      const sampler = setInterval(() => {
        const main = Number(/^VmHWM:\s*(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
        samples.push({ tree: treePeakBytes(child.pid!), main });
      }, 2);
      const code = await new Promise((resolve) => child.once('exit', resolve));
      clearInterval(sampler);
      expect(code).toBe(0);
      const doubled = samples.filter((sample) => sample.tree > sample.main * 1.5);
      expect({ samples: samples.length > 100, doubled: doubled.length }).toEqual({ samples: true, doubled: 0 });
    } finally {
      await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
    }
  }, 60_000);
});

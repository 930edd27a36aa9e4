import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { constants, accessSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { hasRipgrep } from './grepWithRipgrep.js';
import { readBoundedFile } from './readBoundedFile.js';
import { tempDir } from '#test-helpers/fs.js';

// the tools that read in bhrain's own process stop at their bounds on every kind of file: a pseudo-file whose stat says
// 0 bytes (/proc), a device that never ends (/dev/zero), a FIFO with no writer (an open would block for ever) or with a
// writer that never stops. Each call ends within its bound, says why, and leaves the process's memory where it was

const hasRg = await hasRipgrep();
const readable = (path: string) => {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};

let cwd: string;
let writer: ChildProcess;
beforeAll(() => {
  cwd = tempDir('bhrain-pseudo-');
  execFileSync('mkfifo', [join(cwd, 'silent.fifo'), join(cwd, 'endless.fifo')]);
  // a writer that never stops, blocked until something opens the FIFO to read
  writer = spawn('sh', ['-c', `exec yes > ${join(cwd, 'endless.fifo')}`], { stdio: 'ignore' });
  writeFileSync(join(cwd, 'notes.txt'), 'needle\n');
});
afterAll(() => {
  writer.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

const call = (box: ReturnType<typeof genFilesToolBox>, name: string, input: Record<string, unknown>): Promise<BhrainToolResult> =>
  box.execute({ call: { id: `id-${name}`, name, input } }, { cwd, log: silentLog, env: {} });

/** .what = a call's result, how long it took, and how much the process's RSS grew while it ran */
const measured = async (run: () => Promise<BhrainToolResult>) => {
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  const result = await run();
  return { result, elapsedMs: performance.now() - started, grewMb: (process.memoryUsage.rss() - rssBefore) / 1024 / 1024 };
};

const TARGETS: Array<{ path: string; why: RegExp; skip?: boolean }> = [
  { path: '/proc/self/pagemap', why: /binary/ },
  { path: '/proc/kcore', why: /binary/, skip: !readable('/proc/kcore') },
  { path: '/dev/zero', why: /a character device/ },
  { path: '/dev/urandom', why: /a character device/ },
  { path: 'silent.fifo', why: /a FIFO \(named pipe\)/ },
  { path: 'endless.fifo', why: /a FIFO \(named pipe\)/ },
];
const ENGINES = ['builtin', ...(hasRg ? (['rg'] as const) : [])] as const;
// the rg engine's cases are left out where ripgrep is not installed: this skipped test says so
if (!hasRg) it.skip('the rg engine cases (skipped: ripgrep is not on PATH; install it to run them)', () => {});

describe('read and grep on pseudo-files, devices and FIFOs end within their bounds and say why', () => {
  for (const target of TARGETS)
    it.skipIf(target.skip ?? false)(
      `${target.path}: read, and grep by ${ENGINES.join(' and ')}, each answer within 5 s, RSS +<64 MB`,
      async () => {
        const read = await measured(() => call(genFilesToolBox(), 'read', { path: target.path }));
        expect(read.result.success).toBe(false);
        expect(read.result.output).toMatch(target.why);
        for (const engine of ENGINES) {
          const grep = await measured(() =>
            call(genFilesToolBox({ grepEngine: engine }), 'grep', { pattern: 'needle', path: target.path }),
          );
          expect({ engine, output: grep.result.output }).toEqual({ engine, output: expect.stringMatching(target.why) });
          expect(grep.elapsedMs).toBeLessThan(5_000);
          expect(grep.grewMb).toBeLessThan(64);
        }
        expect(read.elapsedMs).toBeLessThan(5_000);
        expect(read.grewMb).toBeLessThan(64);
      },
    );

  it('glob on a device or a FIFO names its kind', async () => {
    for (const path of ['/dev/zero', 'silent.fifo'])
      expect((await call(genFilesToolBox(), 'glob', { pattern: '*', path })).output).toMatch(
        /is a (character device|FIFO \(named pipe\)), not a directory/,
      );
  });

  it('read of a /proc file whose stat says 0 bytes shows its lines (it is not empty)', async () => {
    const result = await call(genFilesToolBox(), 'read', { path: '/proc/self/status' });
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/^\s+1\tName:/);
  });
});

describe('grep and glob walk past an ignore file that is a FIFO, or a link to /dev/zero', () => {
  for (const [name, plant] of Object.entries({
    'a FIFO with no writer': (path: string) => execFileSync('mkfifo', [path]),
    'a link to /dev/zero': (path: string) => symlinkSync('/dev/zero', path),
  }))
    it(`.gitignore and .git/info/exclude as ${name}: glob and the built-in grep answer at once`, async () => {
      const repo = tempDir('bhrain-pseudo-ignore-');
      try {
        execFileSync('git', ['init', '-q', repo]);
        writeFileSync(join(repo, 'a.txt'), 'needle\n');
        plant(join(repo, '.gitignore'));
        rmSync(join(repo, '.git', 'info', 'exclude'), { force: true });
        plant(join(repo, '.git', 'info', 'exclude'));
        const box = genFilesToolBox({ grepEngine: 'builtin' });
        const glob = await measured(() => call(box, 'glob', { pattern: '*.txt', path: repo }));
        expect(glob.result.output).toBe(`${repo}/a.txt`);
        const grep = await measured(() => call(box, 'grep', { pattern: 'needle', path: repo }));
        expect(grep.result.output).toBe(`${repo}/a.txt:1:needle`);
        for (const { elapsedMs, grewMb } of [glob, grep])
          expect({ elapsedMs: elapsedMs < 5_000, grewMb: grewMb < 64 }).toEqual({ elapsedMs: true, grewMb: true });
      } finally {
        rmSync(repo, { recursive: true, force: true });
      }
    });

  it.skipIf(!hasRg)(
    'rg (skipped without ripgrep on PATH) reading a .gitignore linked to /dev/zero stops at its memory bound, and says so',
    async () => {
      const repo = tempDir('bhrain-pseudo-rg-');
      try {
        execFileSync('git', ['init', '-q', repo]);
        writeFileSync(join(repo, 'a.txt'), 'needle\n');
        symlinkSync('/dev/zero', join(repo, '.gitignore'));
        const grep = await measured(() => call(genFilesToolBox({ grepEngine: 'rg' }), 'grep', { pattern: 'needle', path: repo }));
        expect(grep.result).toMatchObject({ success: false, output: expect.stringMatching(/^ripgrep stopped at its 1 GB memory bound/) });
        expect(grep.elapsedMs).toBeLessThan(10_000);
      } finally {
        rmSync(repo, { recursive: true, force: true });
      }
    },
  );
});

describe('readBoundedFile', () => {
  it('counts bytes as read, never the stat size: /proc/self/pagemap (stat 0) stops one byte past the bound', async () => {
    const read = await readBoundedFile({ path: '/proc/self/pagemap', maxBytes: 1_000_000 });
    expect(read).toMatchObject({ kind: 'read', more: true });
    expect(read.kind === 'read' && read.bytes.length).toBe(1_000_000);
    expect(read.kind === 'read' && read.stats.size).toBe(0);
  });

  it('stops between chunks once its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('deadline'));
    await expect(readBoundedFile({ path: '/proc/self/pagemap', maxBytes: 1_000_000, signal: controller.signal })).rejects.toThrow(
      'deadline',
    );
  });
});

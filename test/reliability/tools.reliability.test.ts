// tool faults and bad input: every case goes through the real toolboxes, on real temp files and real processes, and
// checks that the model gets a bounded, explanatory result in time, that no process is left, and that memory stays bounded
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BhrainToolBox, BhrainToolResult } from '../../src/agent/tool/BhrainToolBox.js';
import { genBashToolBox } from '../../src/agent/toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../../src/agent/toolboxes/files/genFilesToolBox.js';
import { truncateToolOutput } from '../../src/agent/tool/truncateToolOutput.js';
import { silentLog } from '../../src/core/contract/BrainContext.js';
import { reliabilityCase } from './reliabilityCase.js';
import { tempDir } from '#test-helpers/fs.js';

/** the loop's default cap on a tool result (limits.maxToolOutputChars) */
const MAX_TOOL_OUTPUT_CHARS = 30_000;
/** what a truncated result may add to the cap: the notice that says where the full output is */
const TRUNCATION_NOTICE_CHARS = 1_000;
const MB = 1024 * 1024;

const hasRipgrep = (() => {
  try {
    execFileSync('rg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let root: string;
let spillDir: string;
// every process a case starts carries this tag in its environment, so a survivor is found even if it left its group
const tag = randomUUID();
beforeAll(async () => {
  root = tempDir('bhrain-rel-tools-');
  spillDir = join(root, 'spill');
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const newDir = async (name: string) => {
  const dir = join(root, `${name}-${randomUUID().slice(0, 8)}`);
  await mkdir(dir, { recursive: true });
  return dir;
};

/** a /proc/<pid>/stat's fields after the command name: state first */
const statFields = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

/**
 * .what = processes alive (not zombies) whose environment carries our tag, seen from the host, less the sandboxes each
 *         toolbox keeps between calls: bwrap and its supervisor (the sandbox's pid 1), with nothing under it but the
 *         bash started for the next call, still waiting for its command: its stdin is still the sandbox's socket (a
 *         command's is /dev/null), and it has no child
 * .note = bash runs in a sandbox with its own pid namespace, so pids and groups logged from inside mean nothing here
 */
const survivors = async (): Promise<string[]> => {
  const tagged = new Map<number, { parent: number; text: string; sandbox: boolean }>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const [state, parent] = statFields(stat);
    if (state === 'Z') continue;
    const environ = await readFile(`/proc/${entry}/environ`).catch(() => Buffer.alloc(0));
    if (!environ.includes(`BHRAIN_RELIABILITY_TAG=${tag}\0`)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    tagged.set(Number(entry), {
      parent: Number(parent),
      text: `${entry} ${stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1)} state ${state}`,
      sandbox: cmdline.includes('\0bhrain-sandbox\0'),
    });
  }
  const childrenOf = (pid: number) => [...tagged].filter(([, found]) => found.parent === pid).map(([child]) => child);
  const waitsForCommand = async (pid: number) =>
    childrenOf(pid).length === 0 && (await readlink(`/proc/${pid}/fd/0`).catch(() => '')).startsWith('socket:');
  for (const [pid, found] of tagged) {
    if (found.parent !== process.pid || !found.sandbox) continue;
    const supervisor = childrenOf(pid);
    if (supervisor.length !== 1 || !tagged.get(supervisor[0])!.sandbox) continue;
    const under = childrenOf(supervisor[0]);
    if (under.length === 0 || (under.length === 1 && (await waitsForCommand(under[0]))))
      for (const kept of [pid, supervisor[0], ...under]) tagged.delete(kept);
  }
  return [...tagged.values()].map((found) => found.text);
};

/** survivors may need a moment to be reaped after the tool returns; then none may be left */
const expectNoSurvivors = async () => {
  let left = await survivors();
  for (let attempt = 0; left.length && attempt < 20; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = await survivors();
  }
  expect(left).toEqual([]);
};

/** runs one call and measures it: wall time, and the peak growth of RSS and of the heap while it ran */
const measure = async (box: BhrainToolBox, name: string, input: Record<string, unknown>, cwd: string) => {
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 10);
  const startedAt = performance.now();
  const result: BhrainToolResult = await box.execute(
    { call: { id: `call-${randomUUID().slice(0, 8)}`, name, input } },
    {
      cwd,
      log: silentLog,
      env: { ...process.env, BHRAIN_RELIABILITY_TAG: tag },
    },
  );
  const elapsedMs = performance.now() - startedAt;
  clearInterval(sampler);
  const after = process.memoryUsage();
  return {
    ...result,
    elapsedMs,
    rssGrowthBytes: Math.max(peakRss, after.rss) - before.rss,
    heapGrowthBytes: Math.max(peakHeap, after.heapUsed) - before.heapUsed,
  };
};

/** what the model would read: the result through the loop's truncation policy */
const asModelSees = async (result: BhrainToolResult, toolName: string) =>
  truncateToolOutput({ output: result.output, maxChars: MAX_TOOL_OUTPUT_CHARS, spillDir, callId: result.callId, toolName });

const files = genFilesToolBox({ grepEngine: 'builtin' });

describe('read: faults and bad input', () => {
  reliabilityCase('read of a missing file says it is missing and names the similar file', async () => {
    const cwd = await newDir('read-missing');
    await writeFile(join(cwd, 'notes.md'), '# notes\n');
    const result = await measure(files, 'read', { path: 'note.md' }, cwd);
    expect(result.success).toBe(false);
    expect(result.output).toBe('File not found: note.md. Did you mean: notes.md?');
    expect(result.elapsedMs).toBeLessThan(1_000);
  });

  reliabilityCase('read of a directory says so, lists at most 50 of its 2,000 entries, and points to glob', async () => {
    const cwd = await newDir('read-dir');
    await mkdir(join(cwd, 'big'));
    await Promise.all(
      Array.from({ length: 2_000 }, (_, index) => writeFile(join(cwd, 'big', `f${String(index).padStart(4, '0')}.txt`), '')),
    );
    const result = await measure(files, 'read', { path: 'big' }, cwd);
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/^big is a directory, not a file\. It has 2,000 entries \(showing the first 50\):\nf0000\.txt\n/);
    expect(result.output).toContain('use glob { pattern: "**/*", path: "big" }');
    expect(result.output.split('\n').length).toBeLessThan(60);
    expect(result.elapsedMs).toBeLessThan(2_000);
  });

  reliabilityCase('read of a binary file refuses to show it and says how to inspect it', async () => {
    const cwd = await newDir('read-binary');
    await writeFile(join(cwd, 'app.bin'), Buffer.concat([Buffer.from('\x7fELF'), Buffer.alloc(64 * 1024, 0), Buffer.from('tail')]));
    const result = await measure(files, 'read', { path: 'app.bin' }, cwd);
    expect(result.success).toBe(false);
    expect(result.output).toMatch(
      /^app\.bin is a binary file \(64\.\d KB; it has NUL bytes in its first 8 KB\), so it is not shown\. Inspect it with bash/,
    );
  });

  reliabilityCase(
    'read of a 1 GB sparse file is fast and bounded: all holes is binary; text then a hole shows a bounded first page',
    async () => {
      const cwd = await newDir('read-sparse');
      await writeFile(join(cwd, 'holes.img'), '');
      await truncate(join(cwd, 'holes.img'), 1024 * MB);
      const holes = await measure(files, 'read', { path: 'holes.img' }, cwd);
      expect(holes.success).toBe(false);
      expect(holes.output).toMatch(/^holes\.img is a binary file \(1\.0 GB/);
      expect(holes.elapsedMs).toBeLessThan(1_000);

      // 100 text lines (10 KB, so the binary sniff sees text), then a 1 GB hole: line 101 is a billion NULs with no line break
      const head = Array.from({ length: 100 }, (_, index) => `line ${index + 1} `.padEnd(99, '.')).join('\n') + '\n';
      await writeFile(join(cwd, 'log.txt'), head);
      await truncate(join(cwd, 'log.txt'), 1024 * MB);
      const firstPage = await measure(files, 'read', { path: 'log.txt' }, cwd);
      expect(firstPage.success).toBe(true);
      expect(firstPage.output).toMatch(/^ {5}1\tline 1 \.+\n/);
      expect(firstPage.output).toMatch(/ {3}101\t\0{2000}… \[line cut: [\d,]+\+ chars\]/);
      expect(firstPage.output).toContain(
        '[Reading stopped inside line 101, which is longer than the 32.0 MB scanned (the file is 1.0 GB).',
      );
      expect(firstPage.output.length).toBeLessThan(20_000);
      expect(firstPage.elapsedMs).toBeLessThan(3_000);
      expect(firstPage.rssGrowthBytes).toBeLessThan(100 * MB);
      expect(firstPage.heapGrowthBytes).toBeLessThan(100 * MB);

      // an offset past the end would scan the whole gigabyte: read stops skipping after 512 MB and says how to get there
      const farOffset = await measure(files, 'read', { path: 'log.txt', offset: 5_000 }, cwd);
      expect(farOffset.success).toBe(false);
      expect(farOffset.output).toMatch(
        /^offset 5000 was not reached: the first 512\.0 MB of log\.txt \(1\.0 GB in all\) hold only 101 lines, and read stops skipping there to stay fast\. Use bash to jump that far \(e\.g\. `tail -n \+5000 log\.txt \| head -n 2000`\)/,
      );
      // the message proves where it stopped; the time only proves it does not hang (512 MB of zeros took 2-6 s in CI)
      expect(farOffset.elapsedMs).toBeLessThan(15_000);
      expect(farOffset.rssGrowthBytes).toBeLessThan(100 * MB);
      expect(farOffset.heapGrowthBytes).toBeLessThan(100 * MB);
    },
  );

  reliabilityCase('read of a file with invalid UTF-8 shows it with replacement characters and a note', async () => {
    const cwd = await newDir('read-utf8');
    await writeFile(join(cwd, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0xff, 0xfe, 0x0a]));
    const result = await measure(files, 'read', { path: 'latin1.txt' }, cwd);
    expect(result.success).toBe(true);
    expect(result.output).toBe(
      '     1\tcaf\uFFFD\n     2\tok\uFFFD\uFFFD\n\n[Note: this file is not valid UTF-8; bytes that could not be decoded are shown as �. Edits that touch them may change those bytes.]',
    );
  });

  reliabilityCase(
    'special files (a FIFO nobody writes to, /dev/zero behind a symlink) are refused by read and grep, skipped by grep walks, never opened by glob (the link is listed, as links are), never waited on',
    async () => {
      const cwd = await newDir('read-special');
      execFileSync('mkfifo', [join(cwd, 'pipe')]);
      await symlink('/dev/zero', join(cwd, 'zero'));
      await writeFile(join(cwd, 'a.txt'), 'TODO a\n');
      for (const [name, input, expected] of [
        [
          'read',
          { path: 'pipe' },
          /^pipe is a FIFO \(named pipe\), not a regular file, so it is not read: reading one can block for ever or never end\./,
        ],
        ['read', { path: 'zero' }, /^zero is a character device, not a regular file/],
        [
          'grep',
          { pattern: 'x', path: 'pipe' },
          /^pipe is a FIFO \(named pipe\), neither a regular file nor a directory, so it is not searched/,
        ],
        ['grep', { pattern: 'TODO' }, /^a\.txt:1:TODO a$/],
        ['glob', { pattern: '**/*' }, /^a\.txt\nzero$/],
      ] as const) {
        for (const box of [files, ...(hasRipgrep ? [genFilesToolBox({ grepEngine: 'rg' })] : [])]) {
          const result = await measure(box, name, input, cwd);
          expect(result.output).toMatch(expected);
          expect(result.elapsedMs).toBeLessThan(2_000);
        }
      }
    },
  );
});

describe('edit and write: faults and bad input', () => {
  reliabilityCase('edit with an absent old_string fails, says why, and leaves the file unchanged', async () => {
    const cwd = await newDir('edit-absent');
    await writeFile(join(cwd, 'app.ts'), 'export const a = 1;\n');
    const result = await measure(files, 'edit', { path: 'app.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' }, cwd);
    expect(result.success).toBe(false);
    expect(result.output).toMatch(
      /^old_string was not found in app\.ts\. It must match the file exactly, including whitespace and line breaks\./,
    );
    expect(await readFile(join(cwd, 'app.ts'), 'utf8')).toBe('export const a = 1;\n');
  });

  reliabilityCase('edit with a duplicated old_string fails as ambiguous, names the lines, and leaves the file unchanged', async () => {
    const cwd = await newDir('edit-dup');
    const text = 'let x = 0;\nx++;\nlet y = 0;\nx++;\nx++;\n';
    await writeFile(join(cwd, 'count.js'), text);
    const result = await measure(files, 'edit', { path: 'count.js', old_string: 'x++;', new_string: 'x += 2;' }, cwd);
    expect(result.success).toBe(false);
    expect(result.output).toBe(
      'old_string occurs 3 times in count.js (at lines 2, 4, 5), so it is ambiguous. Include more surrounding lines in old_string to make it unique, or set replace_all: true to replace every occurrence.',
    );
    expect(await readFile(join(cwd, 'count.js'), 'utf8')).toBe(text);
  });

  reliabilityCase(
    'write to a read-only file system fails with EROFS, naming the path; a parent that is a file fails with ENOTDIR',
    async () => {
      const cwd = await newDir('write-ro');
      const readOnlyDir = join(cwd, 'ro');
      await mkdir(readOnlyDir);
      let mounted = false;
      try {
        // as root, permission bits do not stop a write: a read-only file system does
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', readOnlyDir], { stdio: 'ignore' });
        mounted = true;
      } catch {
        // no mount: /sys is read-only in containers and refuses new files on hosts
      }
      try {
        const target = mounted ? join(readOnlyDir, 'out.txt') : '/sys/bhrain-reliability.txt';
        const nested = mounted ? join(readOnlyDir, 'sub', 'out.txt') : '/sys/bhrain-reliability/out.txt';
        for (const path of [target, nested]) {
          const result = await measure(files, 'write', { path, content: 'data' }, cwd);
          expect(result.success).toBe(false);
          // before the fix a missing directory on a read-only file system was reported as ENOENT (no such file)
          expect(result.output).toMatch(
            mounted
              ? /^Cannot write ro\/(sub\/)?out\.txt: the file system is read-only \(EROFS\)\. Use a path on a writable file system\.$/
              : /^Cannot write \/sys\/bhrain-reliability(\.txt|\/out\.txt): (the file system is read-only \(EROFS\)|permission denied \(EACCES\))/,
          );
        }
        if (mounted) {
          const edit = await measure(files, 'edit', { path: 'ro/new.txt', old_string: '', new_string: 'x' }, cwd);
          expect(edit).toMatchObject({
            success: false,
            output: expect.stringMatching(/^Cannot create ro\/new\.txt: the file system is read-only \(EROFS\)/),
          });
          expect(await readdir(readOnlyDir)).toEqual([]);
        }
      } finally {
        if (mounted) execFileSync('umount', [readOnlyDir]);
      }

      await writeFile(join(cwd, 'plain'), 'a file');
      const underFile = await measure(files, 'write', { path: 'plain/child.txt', content: 'data' }, cwd);
      expect(underFile.success).toBe(false);
      // before the fix this said "the path already exists (EEXIST)", which sends the model after the wrong fix
      expect(underFile.output).toBe(
        'Cannot write plain/child.txt: a component of the path is a file, not a directory (ENOTDIR). Check each directory in the path.',
      );
      expect(await readFile(join(cwd, 'plain'), 'utf8')).toBe('a file');
    },
  );
});

describe('glob and grep over a million matching lines', () => {
  let grepTree: string;
  let globTree: string;
  beforeAll(async () => {
    // 100 files × 10,000 matching lines = 1,000,000 matching lines (27 MB)
    grepTree = await newDir('grep-tree');
    const body = Array.from({ length: 10_000 }, (_, index) => `match line ${String(index).padStart(6, '0')} TODO fix\n`).join('');
    await Promise.all(Array.from({ length: 100 }, (_, index) => writeFile(join(grepTree, `f${String(index).padStart(3, '0')}.txt`), body)));
    // and one file holding a million matching lines by itself (8 MB, under grep's 10 MB file cap)
    await mkdir(join(grepTree, 'one'));
    await writeFile(join(grepTree, 'one', 'million.txt'), 'TODO x\n'.repeat(1_000_000));
    // 100 directories × 200 files = 20,000 files for glob
    globTree = await newDir('glob-tree');
    for (let dir = 0; dir < 100; dir++) {
      const path = join(globTree, `d${String(dir).padStart(3, '0')}`);
      await mkdir(path);
      await Promise.all(Array.from({ length: 200 }, (_, index) => writeFile(join(path, `f${String(index).padStart(3, '0')}.ts`), '')));
    }
  }, 60_000);

  const engines = [
    { engine: 'builtin' as const, available: true },
    { engine: 'rg' as const, available: hasRipgrep },
  ];
  for (const { engine, available } of engines) {
    const declare = available
      ? reliabilityCase
      : (name: string, run: () => Promise<void>, timeoutMs?: number) => it.skip(`${name} (rg is not installed)`, run, timeoutMs);
    declare(
      `grep (${engine}) matching 1,000,000 lines stops at 1,000 matches within 10 s, memory bounded, and says how to narrow`,
      async () => {
        const box = genFilesToolBox({ grepEngine: engine });
        const result = await measure(box, 'grep', { pattern: 'TODO' }, grepTree);
        expect(result.success).toBe(true);
        const lines = result.output.split('\n');
        expect(lines[0]).toBe('f000.txt:1:match line 000000 TODO fix');
        expect(lines.filter((line) => /^f\d{3}\.txt:\d+:/.test(line))).toHaveLength(1_000);
        expect(result.output).toContain('[Showing the first 1,000 matches; there are more. Narrow the search');
        expect(result.elapsedMs).toBeLessThan(10_000);
        expect(result.rssGrowthBytes).toBeLessThan(200 * MB);
        expect(result.heapGrowthBytes).toBeLessThan(200 * MB);
        // over the loop's 30,000-character cap, so the model sees head and tail and where the rest is
        const seen = await asModelSees(result, 'grep');
        expect(seen.truncated).toBe(true);
        expect(seen.output.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS + TRUNCATION_NOTICE_CHARS);
        expect(seen.output).toMatch(/\[… truncated: showed the first [\d,]+ and last [\d,]+ of [\d,]+ characters/);

        const single = await measure(box, 'grep', { pattern: 'TODO', path: 'one' }, grepTree);
        expect(single.success).toBe(true);
        expect(single.output.split('\n').filter((line) => line.startsWith('one/million.txt:'))).toHaveLength(1_000);
        expect(single.output).toContain('there are more');
        expect(single.elapsedMs).toBeLessThan(10_000);
        expect(single.rssGrowthBytes).toBeLessThan(200 * MB);
        expect(single.heapGrowthBytes).toBeLessThan(200 * MB);

        // a pattern that matches nothing reads all 35 MB and says so: success, a normal "no match"
        const none = await measure(box, 'grep', { pattern: 'NOT-THERE-\\d+' }, grepTree);
        expect(none).toMatchObject({ success: true, output: 'No matches for "NOT-THERE-\\\\d+" in the working directory.' });
        expect(none.elapsedMs).toBeLessThan(10_000);
      },
      60_000,
    );
  }

  reliabilityCase(
    'glob over 20,000 files lists 1,000 within 10 s, memory bounded, and says how many more matched',
    async () => {
      const result = await measure(files, 'glob', { pattern: '**/*.ts' }, globTree);
      expect(result.success).toBe(true);
      const paths = result.output.split('\n').filter((line) => /^d\d{3}\/f\d{3}\.ts$/.test(line));
      expect(paths).toHaveLength(1_000);
      expect(paths[0]).toBe('d000/f000.ts');
      expect(result.output).toContain('[Showing 1,000 of 20,000 matching files; 19,000 more matched. Narrow the search');
      expect(result.output.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
      expect(result.elapsedMs).toBeLessThan(10_000);
      expect(result.rssGrowthBytes).toBeLessThan(200 * MB);
      expect(result.heapGrowthBytes).toBeLessThan(200 * MB);

      const none = await measure(files, 'glob', { pattern: '**/*.rs' }, globTree);
      expect(none.success).toBe(true);
      expect(none.output).toMatch(/^No files matched "\*\*\/\*\.rs" under the working directory\./);
    },
    60_000,
  );
});

describe('bash: commands that misbehave', () => {
  // a short grace keeps the suite fast; the default (2 s) behaves the same, only slower
  const bash = genBashToolBox({ killGraceMs: 500 });

  reliabilityCase('a command that never ends is killed at its timeout, with the output so far, and leaves no process', async () => {
    const cwd = await newDir('bash-forever');
    const result = await measure(bash, 'bash', { command: 'echo started; while :; do sleep 1; done', timeout_ms: 700 }, cwd);
    expect(result).toMatchObject({ success: false, exitCode: null });
    expect(result.output).toBe('timed out after 700 ms; the process group was killed\n--- stdout ---\nstarted');
    expect(result.elapsedMs).toBeLessThan(700 + 500 + 1_000);
    await expectNoSurvivors();
  });

  reliabilityCase('a command that ignores SIGTERM (and its children that do too) dies by SIGKILL after the grace', async () => {
    const cwd = await newDir('bash-sigterm');
    const result = await measure(
      bash,
      'bash',
      {
        command: "trap '' TERM; (trap '' TERM; sleep 300) & (trap '' TERM; sleep 300) & echo ignoring; while :; do sleep 1; done",
        timeout_ms: 500,
      },
      cwd,
    );
    expect(result).toMatchObject({ success: false, exitCode: null });
    expect(result.output).toBe('timed out after 500 ms; the process group was killed\n--- stdout ---\nignoring');
    expect(result.elapsedMs).toBeLessThan(500 + 500 + 1_000);
    await expectNoSurvivors();
  });

  reliabilityCase(
    'children that try to outlive the command (&, nohup, disown, setsid, set -m jobs, double fork) are all killed, promptly',
    async () => {
      const cwd = await newDir('bash-orphans');
      const command = [
        'sleep 301 &',
        'nohup sleep 302 > /dev/null 2>&1 &',
        'sleep 303 & disown',
        // a new session leaves the process group that the tool kills
        'setsid sleep 304 > /dev/null 2>&1 &',
        '(setsid sleep 305 &)',
        // job control puts each background job in a process group of its own; this one also holds stdout open
        'set -m; sleep 306 &',
        'for i in $(seq 1 50); do sleep 307 & done',
        'echo launched',
      ].join('\n');
      const result = await measure(bash, 'bash', { command }, cwd);
      expect(result).toMatchObject({ success: true, exitCode: 0 });
      expect(result.output).toBe('exit code: 0\n--- stdout ---\nlaunched');
      // before the fix the setsid and set -m children survived, and the one holding stdout made the call wait out the grace
      expect(result.elapsedMs).toBeLessThan(450);
      await expectNoSurvivors();
    },
  );

  reliabilityCase(
    'a command that prints 2 GB keeps memory bounded, reports the bytes dropped, and the model sees at most 30,000 chars',
    async () => {
      const cwd = await newDir('bash-flood');
      const big = genBashToolBox();
      const result = await measure(
        big,
        'bash',
        { command: 'yes "flood line" | head -c 2000000000; yes err | head -c 300000000 >&2; echo done', timeout_ms: 60_000 },
        cwd,
      );
      expect(result).toMatchObject({ success: true, exitCode: 0, truncated: true });
      expect(result.output).toMatch(/^exit code: 0\n--- stdout ---\nflood line\nflood line\n/);
      expect(result.output).toContain('bytes dropped from the middle of stdout: 2000000005 bytes in all');
      expect(result.output).toContain('bytes dropped from the middle of stderr: 300000000 bytes in all');
      expect(result.output).toMatch(/flood line\nflood lindone\n--- stderr ---\nerr\n/);
      // 8 MB kept per stream at most, as text
      expect(result.output.length).toBeLessThanOrEqual(2 * 8 * MB + 1_000);
      expect(result.rssGrowthBytes).toBeLessThan(200 * MB);
      expect(result.heapGrowthBytes).toBeLessThan(200 * MB);
      expect(result.elapsedMs).toBeLessThan(45_000);
      const seen = await asModelSees(result, 'bash');
      expect(seen.output.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS + TRUNCATION_NOTICE_CHARS);
      expect(seen.output).toMatch(/^exit code: 0\n--- stdout ---\nflood line\n/);
      expect(seen.output).toMatch(/\nerr\n?$/);
      expect(seen.fullOutputPath).toBeDefined();
      await expectNoSurvivors();
    },
    60_000,
  );

  reliabilityCase('a command that reads stdin gets end-of-file at once instead of hanging', async () => {
    const cwd = await newDir('bash-stdin');
    const result = await measure(
      bash,
      'bash',
      {
        command:
          'cat; read -r line || echo "read: EOF"; head -c 10 | wc -c; python3 -c "import sys; print(len(sys.stdin.read()))" 2>/dev/null || echo 0',
        timeout_ms: 10_000,
      },
      cwd,
    );
    expect(result).toMatchObject({ success: true, exitCode: 0 });
    expect(result.output).toBe('exit code: 0\n--- stdout ---\nread: EOF\n0\n0');
    expect(result.elapsedMs).toBeLessThan(3_000);
    await expectNoSurvivors();
  });

  reliabilityCase('a command that exits by a signal says which one (KILL, SEGV, TERM, ABRT), with its output so far', async () => {
    const cwd = await newDir('bash-signal');
    for (const signal of ['KILL', 'SEGV', 'TERM', 'ABRT']) {
      const result = await measure(bash, 'bash', { command: `echo before; kill -${signal} $$; echo after` }, cwd);
      expect(result).toMatchObject({ success: false, exitCode: null });
      expect(result.output).toBe(`killed by signal SIG${signal}\n--- stdout ---\nbefore`);
      expect(result.elapsedMs).toBeLessThan(2_000);
    }
    await expectNoSurvivors();
  });
});

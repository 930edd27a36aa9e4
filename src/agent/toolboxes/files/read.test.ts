import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { tempDir } from '#test-helpers/fs.js';

// every test below runs the read tool in a fresh temp dir
let cwd: string;
const box = genFilesToolBox();
const read = (input: Record<string, unknown>): Promise<BhrainToolResult> =>
  box.execute({ call: { id: 'call-1', name: 'read', input } }, { cwd, log: silentLog, env: {} });

beforeEach(async () => {
  cwd = tempDir('bhrain-read-');
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('read', () => {
  it('read returns the contents, numbered like cat -n', async () => {
    await writeFile(join(cwd, 'hello.ts'), 'const a = 1;\n\tconst b = 2;\n');
    const result = await read({ path: 'hello.ts' });
    expect(result).toEqual({ callId: 'call-1', success: true, output: '     1\tconst a = 1;\n     2\t\tconst b = 2;' });
  });

  it('read of a non-existent file returns an error result naming similar files', async () => {
    await writeFile(join(cwd, 'utils.ts'), 'x');
    await writeFile(join(cwd, 'utils.test.ts'), 'x');
    await writeFile(join(cwd, 'unrelated.md'), 'x');
    const result = await read({ path: 'utlis.ts' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('File not found: utlis.ts');
    expect(result.output).toContain('utils.ts');
    expect(result.output).not.toContain('unrelated.md');
  });

  it('read of a file in a missing directory says which directory is missing', async () => {
    await mkdir(join(cwd, 'src'));
    const result = await read({ path: 'scr/index.ts' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('the directory scr does not exist');
    expect(result.output).toContain('Did you mean: src');
  });

  it('resolves relative paths against cwd and accepts absolute paths', async () => {
    await writeFile(join(cwd, 'a.txt'), 'abs\n');
    expect((await read({ path: join(cwd, 'a.txt') })).output).toBe('     1\tabs');
  });

  it('pages with offset and limit, and says where to continue', async () => {
    await writeFile(join(cwd, 'ten.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const page = await read({ path: 'ten.txt', offset: 3, limit: 2 });
    expect(page.success).toBe(true);
    expect(page.output).toContain('     3\tline 3\n     4\tline 4');
    expect(page.output).not.toContain('line 5');
    expect(page.output).toContain('of 10');
    expect(page.output).toContain('offset: 5');
    const end = await read({ path: 'ten.txt', offset: 9 });
    expect(end.output).toBe('     9\tline 9\n    10\tline 10');
  });

  it('answers an offset past the end with an error naming the line count', async () => {
    await writeFile(join(cwd, 'three.txt'), 'a\nb\nc\n');
    const result = await read({ path: 'three.txt', offset: 7 });
    expect(result.success).toBe(false);
    expect(result.output).toContain('has 3 lines');
  });

  it('cuts lines longer than 2000 chars with a marker giving the full length', async () => {
    await writeFile(join(cwd, 'long.txt'), `${'x'.repeat(5_000)}\nshort\n`);
    const result = await read({ path: 'long.txt' });
    const [first, second] = result.output.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2_000)}… [line cut: 5,000 chars]`);
    expect(second).toBe('     2\tshort');
  });

  it('says an empty file is empty', async () => {
    await writeFile(join(cwd, 'empty.txt'), '');
    expect(await read({ path: 'empty.txt' })).toMatchObject({ success: true, output: 'empty.txt is empty (0 bytes).' });
  });
});

describe('read: binary files, directories, encodings, huge files and bad input', () => {
  it('refuses a binary file, naming its size, without dumping it', async () => {
    await writeFile(join(cwd, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03, 0x00]));
    const result = await read({ path: 'image.png' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('binary file (9 bytes');
    expect(result.output).not.toContain('PNG');
  });

  it('answers a directory with its entries and a glob suggestion', async () => {
    await mkdir(join(cwd, 'dir/sub'), { recursive: true });
    for (let index = 0; index < 60; index++) await writeFile(join(cwd, 'dir', `f${String(index).padStart(2, '0')}.txt`), '');
    const result = await read({ path: 'dir' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('dir is a directory, not a file. It has 61 entries (showing the first 50)');
    expect(result.output).toContain('f00.txt');
    expect(result.output).not.toContain('f59.txt');
    expect(result.output).toContain('glob');
  });

  it('decodes invalid UTF-8 with replacement characters and says the file is not valid UTF-8', async () => {
    await writeFile(join(cwd, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const result = await read({ path: 'latin1.txt' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('     1\tcaf\uFFFD');
    expect(result.output).toContain('not valid UTF-8');
  });

  it('shows CRLF files without the CR and notes the line endings', async () => {
    await writeFile(join(cwd, 'dos.txt'), 'one\r\ntwo\r\n');
    const result = await read({ path: 'dos.txt' });
    expect(result.output).toContain('     1\tone\n     2\ttwo');
    expect(result.output).toContain('CRLF');
  });

  it('streams a sparse 1 GB file: first lines in under 1 s, heap growth under 50 MB', async () => {
    const path = join(cwd, 'huge.log');
    const handle = await open(path, 'w');
    await handle.truncate(1024 ** 3);
    // more than 8 KB of text up front, so the NULs of the sparse rest are past the binary sniff
    const head = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    await handle.write(head, 0, 'utf8');
    await handle.close();

    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const result = await read({ path: 'huge.log' });
    const elapsedMs = performance.now() - started;
    const heapGrowthBytes = process.memoryUsage().heapUsed - heapBefore;

    expect(result.success).toBe(true);
    expect(result.output.startsWith('     1\tline 1\n     2\tline 2\n')).toBe(true);
    expect(result.output).toContain('  2000\tline 2000');
    expect(result.output).not.toContain('line 2001\n');
    expect(result.output).toContain('1.0 GB');
    expect(result.output).toContain('offset: 2001');
    expect(elapsedMs).toBeLessThan(1_000);
    expect(heapGrowthBytes).toBeLessThan(50 * 1024 * 1024);
  });

  it('stops inside a line longer than the scan budget instead of reading it all', async () => {
    const handle = await open(join(cwd, 'minified.js'), 'w');
    await handle.write('a\nb\nc\n');
    await handle.write('z'.repeat(40 * 1024 * 1024));
    await handle.close();
    const started = performance.now();
    const result = await read({ path: 'minified.js' });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result.output).toContain('     3\tc\n     4\tzzz');
    expect(result.output).toMatch(/… \[line cut: [\d,]+\+ chars\]/);
    expect(result.output).toContain('offset: 5');
  });

  it('answers bad input with an error result naming the field', async () => {
    expect(await read({ path: 'x', offset: 0 })).toMatchObject({
      success: false,
      output: expect.stringContaining('input.offset must be >= 1'),
    });
    expect(await read({})).toMatchObject({ success: false, output: expect.stringContaining('input.path is required') });
  });
});

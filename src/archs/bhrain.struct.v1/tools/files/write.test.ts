import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../../contract/BrainContext.js';
import type { BhrainToolResult } from '../BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';

describe('write', () => {
  let cwd: string;
  const box = genFilesToolBox();
  const write = (input: Record<string, unknown>): Promise<BhrainToolResult> =>
    box.execute({ call: { id: 'call-1', name: 'write', input } }, { cwd, log: silentLog, env: {} });

  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'bhrain-write-'));
  });
  afterEach(async () => {
    await chmod(join(cwd, 'locked'), 0o755).catch(() => {});
    await rm(cwd, { recursive: true, force: true });
  });

  it('usecase.3: write writes to disk, creating parent directories, and returns success', async () => {
    const result = await write({ path: 'deep/er/new.txt', content: 'one\ntwo\n' });
    expect(result).toEqual({
      callId: 'call-1',
      success: true,
      output: 'Created deep/er/new.txt: wrote 8 bytes, 2 lines.',
    });
    expect(await readFile(join(cwd, 'deep/er/new.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('usecase.3: write over an existing file says it overwrote it', async () => {
    await writeFile(join(cwd, 'old.txt'), 'previous content');
    const result = await write({ path: 'old.txt', content: 'é' });
    expect(result.success).toBe(true);
    expect(result.output).toBe('Overwrote old.txt (it was 16 bytes): wrote 2 bytes, 1 line.');
    expect(await readFile(join(cwd, 'old.txt'), 'utf8')).toBe('é');
  });

  it('turns a directory target into an error result (EISDIR)', async () => {
    await mkdir(join(cwd, 'folder'));
    const result = await write({ path: 'folder', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('folder');
    expect(result.output).toContain('EISDIR');
  });

  it.skipIf(process.getuid?.() === 0)('turns a permission failure into an error result naming the path and cause', async () => {
    await mkdir(join(cwd, 'locked'));
    await chmod(join(cwd, 'locked'), 0o500);
    const result = await write({ path: 'locked/file.txt', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('locked/file.txt');
    expect(result.output).toContain('permission denied (EACCES)');
  });

  it('turns a file in the way of a parent directory into an error result', async () => {
    await writeFile(join(cwd, 'plain'), 'x');
    const result = await write({ path: 'plain/child.txt', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('plain/child.txt');
    expect(result.output).toMatch(/ENOTDIR|EEXIST/);
  });

  it('rejects a missing content field with an error result', async () => {
    expect(await write({ path: 'x.txt' })).toMatchObject({ success: false, output: expect.stringContaining('`content`') });
  });
});

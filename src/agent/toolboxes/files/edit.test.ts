import { link, mkdir, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import type { WriteCheck } from './openInsideWorkspace.js';
import { tempDir } from '#test-helpers/fs.js';

// every test below runs the edit tool in a fresh temp dir
let cwd: string;
const box = genFilesToolBox();
const edit = (input: Record<string, unknown>): Promise<BhrainToolResult> =>
  box.execute({ call: { id: 'call-1', name: 'edit', input } }, { cwd, log: silentLog, env: {} });
const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

beforeEach(async () => {
  cwd = tempDir('bhrain-edit-');
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('edit', () => {
  it('edit replaces and confirms the updated content with 3 lines of context', async () => {
    await writeFile(join(cwd, 'a.txt'), numbered(20));
    const result = await edit({ path: 'a.txt', old_string: 'line 10\n', new_string: 'line ten\nline ten and a half\n' });
    expect(result.success).toBe(true);
    expect(result.output).toBe(
      [
        'Edited a.txt: 1 replacement. Updated lines:',
        '     7\tline 7',
        '     8\tline 8',
        '     9\tline 9',
        '    10\tline ten',
        '    11\tline ten and a half',
        '    12\tline 11',
        '    13\tline 12',
        '    14\tline 13',
      ].join('\n'),
    );
    expect(await readFile(join(cwd, 'a.txt'), 'utf8')).toContain('line 9\nline ten\nline ten and a half\nline 11\n');
  });

  it('edit of a missing string returns an error result the model can act on', async () => {
    await writeFile(join(cwd, 'a.txt'), 'alpha\nbeta\n');
    const result = await edit({ path: 'a.txt', old_string: 'gamma', new_string: 'delta' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('old_string was not found in a.txt');
    expect(await readFile(join(cwd, 'a.txt'), 'utf8')).toBe('alpha\nbeta\n');
  });

  it('says when only whitespace or indentation differs, with the line number and the real text', async () => {
    await writeFile(join(cwd, 'code.ts'), 'const x = 1;\nfunction f() {\n\treturn 1;\n}\n');
    const result = await edit({
      path: 'code.ts',
      old_string: 'function f() {\n    return 1;\n}',
      new_string: 'function f() {\n\treturn 2;\n}',
    });
    expect(result.success).toBe(false);
    expect(result.output).toContain('whitespace or indentation differs');
    expect(result.output).toContain('at line 2');
    expect(result.output).toContain('     3\t\treturn 1;');
  });

  it('refuses an old_string found more than once, with the count and line numbers', async () => {
    await writeFile(join(cwd, 'dup.ts'), 'let x = 1;\nfoo();\nlet y = 2;\nfoo();\n');
    const result = await edit({ path: 'dup.ts', old_string: 'foo();', new_string: 'bar();' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('occurs 2 times');
    expect(result.output).toContain('lines 2, 4');
    expect(result.output).toContain('replace_all');
    expect(await readFile(join(cwd, 'dup.ts'), 'utf8')).toContain('foo();');
  });

  it('replaces every occurrence with replace_all and says how many', async () => {
    await writeFile(join(cwd, 'dup.ts'), 'foo();\nfoo();\nkeep();\nfoo();\n');
    const result = await edit({ path: 'dup.ts', old_string: 'foo', new_string: 'bar', replace_all: true });
    expect(result.success).toBe(true);
    expect(result.output).toContain('3 replacements');
    expect(await readFile(join(cwd, 'dup.ts'), 'utf8')).toBe('bar();\nbar();\nkeep();\nbar();\n');
  });

  it('keeps "$&" and "$1" in new_string literal', async () => {
    await writeFile(join(cwd, 'price.txt'), 'price: X\n');
    await edit({ path: 'price.txt', old_string: 'X', new_string: '$& $1 $$' });
    expect(await readFile(join(cwd, 'price.txt'), 'utf8')).toBe('price: $& $1 $$\n');
  });

  it('refuses an old_string equal to new_string', async () => {
    await writeFile(join(cwd, 'same.txt'), 'x');
    expect(await edit({ path: 'same.txt', old_string: 'x', new_string: 'x' })).toMatchObject({
      success: false,
      output: expect.stringContaining('identical'),
    });
  });

  it('creates a missing file from an empty old_string', async () => {
    const result = await edit({ path: 'new/file.txt', old_string: '', new_string: 'hello\n' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('Created new/file.txt');
    expect(await readFile(join(cwd, 'new/file.txt'), 'utf8')).toBe('hello\n');
  });

  it('refuses an empty old_string on a non-empty file', async () => {
    await writeFile(join(cwd, 'full.txt'), 'content');
    expect(await edit({ path: 'full.txt', old_string: '', new_string: 'x' })).toMatchObject({ success: false });
    expect(await readFile(join(cwd, 'full.txt'), 'utf8')).toBe('content');
  });

  it('edits a missing file as an error naming similar files', async () => {
    await writeFile(join(cwd, 'config.json'), '{}');
    const result = await edit({ path: 'confg.json', old_string: 'a', new_string: 'b' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('config.json');
  });

  it('matches a multi-line old_string in a CRLF file and keeps its line endings', async () => {
    await writeFile(join(cwd, 'dos.txt'), 'one\r\ntwo\r\nthree\r\n');
    const result = await edit({ path: 'dos.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' });
    expect(result.success).toBe(true);
    expect(await readFile(join(cwd, 'dos.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('refuses binary and invalid UTF-8 files rather than corrupt them', async () => {
    await writeFile(join(cwd, 'bin.dat'), Buffer.from([0x61, 0x00, 0x62]));
    await writeFile(join(cwd, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(await edit({ path: 'bin.dat', old_string: 'a', new_string: 'c' })).toMatchObject({
      success: false,
      output: expect.stringContaining('binary'),
    });
    expect(await edit({ path: 'latin1.txt', old_string: 'caf', new_string: 'cafe' })).toMatchObject({
      success: false,
      output: expect.stringContaining('not valid UTF-8'),
    });
  });
});

describe('edit reads and writes the one file it opened, where it really is', () => {
  // the workspace is cwd/ws; cwd/outside is beside it, and nothing there may change without an approval of that file
  let ws: string;
  let outside: string;
  const editIn = (input: Record<string, unknown>, writeCheck: WriteCheck | null = null) =>
    box.execute({ call: { id: 'call-1', name: 'edit', input } }, { cwd: ws, log: silentLog, env: {}, writeCheck } as Parameters<
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

  it('refuses a hard link to a file outside (ln ../outside/t hl), which stays unchanged; the approved file is edited', async () => {
    await link(join(outside, 't'), join(ws, 'hl'));
    expect(await editIn({ path: 'hl', old_string: 'original', new_string: 'changed' })).toMatchObject({
      success: false,
      output: expect.stringMatching(
        /^Refused to edit hl: it has 2 hard links, so the same file may also appear outside the workspace, and changing it was not approved\. Nothing was changed\./,
      ),
    });
    expect(await readFile(join(outside, 't'), 'utf8')).toBe('original\n');
    expect(
      (await editIn({ path: 'hl', old_string: 'original', new_string: 'approved' }, { realPath: join(ws, 'hl'), approved: true })).success,
    ).toBe(true);
    expect(await readFile(join(outside, 't'), 'utf8')).toBe('approved\n');
  });

  it('refuses symlinks that point out (a file, a directory, a dangling target to create); follows those that point inside', async () => {
    await symlink(join(outside, 't'), join(ws, 'to-file'));
    await symlink('../outside', join(ws, 'd'));
    await symlink('../outside/new', join(ws, 'dangling'));
    await writeFile(join(ws, 'inside.txt'), 'original\n');
    await symlink('inside.txt', join(ws, 'to-inside'));
    const attempts = [
      { path: 'to-file', old_string: 'original', new_string: 'changed' },
      { path: 'd/t', old_string: 'original', new_string: 'changed' },
      { path: 'dangling', old_string: '', new_string: 'created' },
      { path: 'd/sub/new', old_string: '', new_string: 'created' },
    ];
    for (const input of attempts)
      expect((await editIn(input)).output).toMatch(/^Refused to edit .+: it resolves to .+, outside the workspace /);
    expect(await readdir(outside)).toEqual(['t']);
    expect(await readFile(join(outside, 't'), 'utf8')).toBe('original\n');
    expect((await editIn({ path: 'to-inside', old_string: 'original', new_string: 'edited' })).output).toMatch(
      /^Edited to-inside: 1 replacement/,
    );
    expect(await readFile(join(ws, 'inside.txt'), 'utf8')).toBe('edited\n');
  });
});

import { rm } from 'node:fs/promises';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { describeFsError } from './fsErrors.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { tempDir } from '#test-helpers/fs.js';

describe('genFilesToolBox', () => {
  let cwd: string;
  const box = genFilesToolBox({ grepEngine: 'builtin' });
  const call = (name: string, input: Record<string, unknown>, extra: { inputError?: string } = {}): Promise<BhrainToolResult> =>
    box.execute({ call: { id: `id-${name}`, name, input, ...extra } }, { cwd, log: silentLog, env: {} });

  beforeEach(async () => {
    cwd = tempDir('bhrain-files-');
  });
  afterEach(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('is named files and defines read, write, edit, glob and grep with closed, described schemas', () => {
    expect(box.name).toBe('files');
    expect(box.definitions.map((definition) => definition.name)).toEqual(['read', 'write', 'edit', 'glob', 'grep']);
    const fields = Object.fromEntries(
      box.definitions.map((definition) => [definition.name, Object.keys(definition.inputSchema.properties ?? {})]),
    );
    expect(fields).toEqual({
      read: ['path', 'offset', 'limit'],
      write: ['path', 'content'],
      edit: ['path', 'old_string', 'new_string', 'replace_all'],
      glob: ['pattern', 'path', 'include_ignored'],
      grep: ['pattern', 'path', 'glob', 'include_ignored'],
    });
    for (const definition of box.definitions) {
      expect(definition.inputSchema.additionalProperties).toBe(false);
      expect(definition.description.split('\n').length).toBeGreaterThanOrEqual(2);
      expect(definition.description.split('\n').length).toBeLessThanOrEqual(8);
      for (const property of Object.values(definition.inputSchema.properties ?? {}))
        expect(property.description?.length).toBeGreaterThan(10);
    }
  });

  it('write, read, edit, glob and grep work together on one file', async () => {
    expect((await call('write', { path: 'notes/todo.md', content: '# Todo\n- buy milk\n- call mom\n' })).success).toBe(true);
    expect((await call('read', { path: 'notes/todo.md' })).output).toBe('     1\t# Todo\n     2\t- buy milk\n     3\t- call mom');
    const edited = await call('edit', { path: 'notes/todo.md', old_string: '- buy milk', new_string: '- buy oat milk' });
    expect(edited).toMatchObject({ callId: 'id-edit', success: true });
    expect(edited.output).toContain('     2\t- buy oat milk');
    expect((await call('glob', { pattern: '**/*.md' })).output).toBe('notes/todo.md');
    expect((await call('grep', { pattern: 'oat' })).output).toBe('notes/todo.md:2:- buy oat milk');
  });

  it('answers an unknown tool name with an error result listing its tools', async () => {
    expect(await call('delete', { path: 'x' })).toEqual({
      callId: 'id-delete',
      success: false,
      output: "tool not found: 'delete'. Available tools: read, write, edit, glob, grep. Call one of these instead.",
    });
  });

  it('answers a call whose arguments failed to parse with an error result, without running it', async () => {
    const result = await call('write', { path: 'never.txt', content: 'x' }, { inputError: 'arguments were not valid JSON' });
    expect(result).toMatchObject({ success: false, output: expect.stringContaining('not valid JSON') });
    await expect(call('read', { path: 'never.txt' })).resolves.toMatchObject({ success: false });
  });

  it('never throws out of execute: wrong types and NUL paths become error results', async () => {
    const inputs: [string, Record<string, unknown>][] = [
      ['read', { path: 42 }],
      ['read', { path: 'a\0b' }],
      ['write', { path: '', content: 'x' }],
      ['edit', { path: 'x', old_string: null, new_string: 'y' }],
      ['glob', { pattern: ['*'] }],
      ['grep', { pattern: 'x', glob: 7 }],
      ['read', { path: 'x', limit: 'many' }],
    ];
    for (const [name, input] of inputs) {
      const result = await call(name, input);
      expect(result.success).toBe(false);
      expect(result.output).toMatch(
        /^the arguments of \w+ do not fit its schema: input\.\w+ .*\. Call \w+ again with corrected arguments$/,
      );
    }
  });

  it('explains file-system failures with the path, the cause and a fix', () => {
    const error = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
    expect(describeFsError({ error, action: 'write', path: 'etc/x' })).toBe(
      'Cannot write etc/x: the file system is read-only (EROFS). Use a path on a writable file system.',
    );
  });
});

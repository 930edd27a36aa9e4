import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { hasRipgrep } from './grepWithRipgrep.js';
import { walkFiles } from './walkFiles.js';
import { tempDir } from '#test-helpers/fs.js';

const hasRg = await hasRipgrep();
// the rg engine's cases are left out where ripgrep is not installed: this skipped test says so
if (!hasRg) it.skip('the rg engine cases (skipped: ripgrep is not on PATH; install it to run them)', () => {});

/** levels of the DAG: following its links would make 2^24 (16.7 million) paths to the one leaf */
const LEVELS = 24;

/** the bound: glob and grep over the DAG end within this long */
const MAX_MS = 5_000;

describe('glob and grep over a DAG of symlinked directories (24 levels, 2 links each, no cycle)', () => {
  let cwd: string;
  // l0/{a,b} -> ../l1, l1/{a,b} -> ../l2, …, l24/leaf.txt: git stores such links, so a cloned repo can hold one
  const links = Array.from({ length: LEVELS }, (_, level) => [`l${level}/a`, `l${level}/b`]).flat();
  beforeAll(async () => {
    cwd = tempDir('bhrain-dag-');
    for (let level = 0; level <= LEVELS; level++) await mkdir(join(cwd, `l${level}`));
    for (const link of links) await symlink(`../l${Number(link.slice(1, link.indexOf('/'))) + 1}`, join(cwd, link));
    await writeFile(join(cwd, `l${LEVELS}`, 'leaf.txt'), 'needle\n');
  });
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });
  const run = async (name: string, input: Record<string, unknown>, engine: 'builtin' | 'rg' = 'builtin') => {
    const startedAt = Date.now();
    const result = await genFilesToolBox({ grepEngine: engine }).execute(
      { call: { id: 'call-1', name, input } },
      { cwd, log: silentLog, env: {} },
    );
    return { ...result, elapsedMs: Date.now() - startedAt };
  };

  it('glob **/* lists each link once, as an entry, and the leaf, in under 5 s', async () => {
    const result = await run('glob', { pattern: '**/*' });
    expect(result.elapsedMs).toBeLessThan(MAX_MS);
    expect(result.success).toBe(true);
    expect(result.output.split('\n')).toEqual([...links, `l${LEVELS}/leaf.txt`].sort());
  });

  it.each(['builtin', ...(hasRg ? ['rg' as const] : [])] as const)(
    'grep (%s) finds the leaf once, and searches the whole DAG for a missing pattern, in under 5 s',
    async (engine) => {
      const found = await run('grep', { pattern: 'needle' }, engine);
      expect(found.elapsedMs).toBeLessThan(MAX_MS);
      expect(found.output).toBe(`l${LEVELS}/leaf.txt:1:needle`);
      const missing = await run('grep', { pattern: 'zzz_absent' }, engine);
      expect(missing.elapsedMs).toBeLessThan(MAX_MS);
      expect(missing.output).toBe('No matches for "zzz_absent" in the working directory.');
    },
  );
});

describe('the walk stops at its budget', () => {
  let root: string;
  beforeAll(async () => {
    root = tempDir('bhrain-walk-');
    for (let index = 0; index < 5; index++) await writeFile(join(root, `f${index}`), '');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const walk = (budget: { maxEntries: number; deadline: number }) =>
    walkFiles({ root, skipHiddenDirectories: true, skipNodeModules: true, ...budget });

  it('after maxEntries entries, with a stop that says so', async () => {
    const result = await walk({ maxEntries: 3, deadline: Date.now() + 60_000 });
    // which three of the five depends on the order the file system lists them in
    expect(result.files).toHaveLength(3);
    for (const file of result.files) expect(file).toMatch(/\/f[0-4]$/);
    expect(result.stop).toEqual({ reason: 'entries', entries: 3, elapsedMs: expect.any(Number) });
  });

  it('at its deadline', async () => {
    expect(await walk({ maxEntries: 1_000, deadline: Date.now() - 1 })).toEqual({
      files: [],
      stop: { reason: 'time', entries: 0, elapsedMs: expect.any(Number) },
    });
  });

  it('not at all when the tree fits the budget', async () => {
    const result = await walk({ maxEntries: 5, deadline: Date.now() + 60_000 });
    expect(result.stop).toBeUndefined();
    expect(result.files.map((file) => file.slice(root.length + 1)).sort()).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
  });
});

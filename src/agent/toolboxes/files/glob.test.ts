import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { genGlobTool } from './glob.js';
import { genHiddenPathsOf } from './hiddenPaths.js';
import { compileGlob, globToRegExp } from './globs.js';
import { tempDir } from '#test-helpers/fs.js';

describe('globToRegExp', () => {
  const matches = (pattern: string, path: string) => globToRegExp(pattern).test(path);

  it('matches ** at any depth, zero included', () => {
    expect(matches('**/*.ts', 'a.ts')).toBe(true);
    expect(matches('**/*.ts', 'src/deep/a.ts')).toBe(true);
    expect(matches('src/**/*.ts', 'src/a.ts')).toBe(true);
    expect(matches('src/**/*.ts', 'src/x/y/a.ts')).toBe(true);
    expect(matches('src/**/*.ts', 'lib/a.ts')).toBe(false);
    expect(matches('src/**', 'src/x/y')).toBe(true);
  });

  it('keeps * and ? within one path segment, and matches dotfiles', () => {
    expect(matches('*.ts', 'a.ts')).toBe(true);
    expect(matches('*.ts', 'src/a.ts')).toBe(false);
    expect(matches('?.md', 'a.md')).toBe(true);
    expect(matches('?.md', 'ab.md')).toBe(false);
    expect(matches('*', '.env')).toBe(true);
  });

  it('expands braces, nested ones too, and matches character classes', () => {
    for (const path of ['src/a/x.ts', 'src/a/x.tsx', 'src/b/x.ts', 'src/b/x.tsx']) expect(matches('src/{a,b}/*.{ts,tsx}', path)).toBe(true);
    expect(matches('src/{a,b}/*.{ts,tsx}', 'src/c/x.ts')).toBe(false);
    for (const path of ['a', 'b', 'c']) expect(matches('{a,{b,c}}', path)).toBe(true);
    expect(matches('{literal}', '{literal}')).toBe(true);
    expect(matches('file[0-9].txt', 'file7.txt')).toBe(true);
    expect(matches('file[!0-9].txt', 'file7.txt')).toBe(false);
    expect(matches('file[abc].txt', 'fileb.txt')).toBe(true);
    expect(matches('a.(b)+', 'a.(b)+')).toBe(true);
  });

  it('prunes directories that cannot hold a match', () => {
    const glob = compileGlob('src/{a,b}/**/*.ts');
    expect(glob.couldContain('src')).toBe(true);
    expect(glob.couldContain('src/a/deep')).toBe(true);
    expect(glob.couldContain('src/c')).toBe(false);
    expect(glob.couldContain('test')).toBe(false);
    expect(compileGlob('*.ts').couldContain('src')).toBe(false);
  });
});

describe('glob', () => {
  let cwd: string;
  const box = genFilesToolBox();
  const glob = (input: Record<string, unknown>): Promise<BhrainToolResult> =>
    box.execute({ call: { id: 'call-1', name: 'glob', input } }, { cwd, log: silentLog, env: {} });
  const touch = async (...paths: string[]) => {
    for (const path of paths) {
      await mkdir(dirname(join(cwd, path)), { recursive: true });
      await writeFile(join(cwd, path), '');
    }
  };

  beforeEach(async () => {
    cwd = tempDir('bhrain-glob-');
  });
  afterEach(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('glob returns matching paths, relative to cwd and sorted', async () => {
    await touch('src/b.ts', 'src/a.ts', 'src/lib/c.ts', 'src/readme.md', 'test/d.ts', 'a.txt');
    const result = await glob({ pattern: 'src/**/*.ts' });
    expect(result).toEqual({ callId: 'call-1', success: true, output: 'src/a.ts\nsrc/b.ts\nsrc/lib/c.ts' });
  });

  it('glob with no match is a success that says so, with a hint for patterns without "/"', async () => {
    await touch('src/a.ts');
    const result = await glob({ pattern: '*.ts' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('No files matched "*.ts"');
    expect(result.output).toContain('**/*.ts');
  });

  it('expands braces', async () => {
    await touch('src/a.ts', 'src/b.tsx', 'src/c.js', 'lib/d.ts');
    expect((await glob({ pattern: '{src,lib}/*.{ts,tsx}' })).output).toBe('lib/d.ts\nsrc/a.ts\nsrc/b.tsx');
  });

  it('matches ( ) | and quotes as plain characters, as in route-group directories', async () => {
    await touch('app/(marketing)/page.tsx', 'app/marketing/page.tsx', 'app/a|b.ts');
    expect((await glob({ pattern: 'app/(marketing)/*.tsx' })).output).toBe('app/(marketing)/page.tsx');
    expect((await glob({ pattern: '**/(marketing)/page.tsx' })).output).toBe('app/(marketing)/page.tsx');
    expect((await glob({ pattern: 'app/a|b.ts' })).output).toBe('app/a|b.ts');
  });

  it('searches under path, and shows results relative to cwd', async () => {
    await touch('pkg/one/x.json', 'pkg/two/y.json', 'other/z.json');
    expect((await glob({ pattern: '**/*.json', path: 'pkg' })).output).toBe('pkg/one/x.json\npkg/two/y.json');
  });

  it('caps at 1000 results with a notice of how many more matched', async () => {
    await mkdir(join(cwd, 'many'));
    await Promise.all(Array.from({ length: 1_005 }, (_, i) => writeFile(join(cwd, 'many', `f${String(i).padStart(4, '0')}.txt`), '')));
    const result = await glob({ pattern: 'many/*.txt' });
    const lines = result.output.split('\n');
    expect(lines[0]).toBe('many/f0000.txt');
    expect(lines[999]).toBe('many/f0999.txt');
    expect(result.output).toContain('Showing 1,000 of 1,005 matching files; 5 more matched');
    expect(result.output).not.toContain('f1000.txt');
  });

  it('skips .git always, and hidden directories and node_modules unless named', async () => {
    await touch('.git/config.ts', 'node_modules/dep/index.ts', 'src/a.ts', '.hidden/b.ts', '.dotfile.ts');
    expect((await glob({ pattern: '**/*.ts' })).output).toBe('.dotfile.ts\nsrc/a.ts');
    expect((await glob({ pattern: 'node_modules/**/*.ts' })).output).toBe('node_modules/dep/index.ts');
    expect((await glob({ pattern: '.hidden/*.ts' })).output).toBe('.hidden/b.ts');
    expect((await glob({ pattern: '**/.hidden/*.ts' })).output).toBe('.hidden/b.ts');
    expect((await glob({ pattern: '**/*.ts', include_ignored: true })).output).toBe(
      '.dotfile.ts\n.hidden/b.ts\nnode_modules/dep/index.ts\nsrc/a.ts',
    );
  });

  it('lists symbolic links as entries and never enters them; a linked directory named as path is searched', async () => {
    await touch('src/a.ts', 'src/lib/b.ts');
    await symlink(join(cwd, 'src'), join(cwd, 'src', 'lib', 'loop'));
    await symlink(join(cwd, 'src'), join(cwd, 'alias'));
    await symlink(join(cwd, 'src', 'a.ts'), join(cwd, 'link.ts'));
    await symlink(join(cwd, 'nowhere'), join(cwd, 'broken.ts'));
    expect((await glob({ pattern: '**/*' })).output).toBe('alias\nbroken.ts\nlink.ts\nsrc/a.ts\nsrc/lib/b.ts\nsrc/lib/loop');
    expect((await glob({ pattern: '**/*.ts' })).output).toBe('broken.ts\nlink.ts\nsrc/a.ts\nsrc/lib/b.ts');
    // named explicitly, as path or as the pattern's literal start, the link is entered one level: links inside it are not
    expect((await glob({ pattern: '**/*', path: 'alias' })).output).toBe('alias/a.ts\nalias/lib/b.ts\nalias/lib/loop');
    expect((await glob({ pattern: 'alias/lib/*' })).output).toBe('alias/lib/b.ts\nalias/lib/loop');
  });

  it('stops at its entry budget with a notice that says how far it got', async () => {
    await touch(...Array.from({ length: 30 }, (_, i) => `many/f${String(i).padStart(2, '0')}.txt`));
    const run = (tool: ReturnType<typeof genGlobTool>) =>
      tool.execute({ pattern: '**/*.txt' }, { cwd, log: silentLog, env: {}, callId: 'c' });
    const hidden = genHiddenPathsOf({});
    const result = await run(genGlobTool({ hidden, maxEntries: 11 }));
    // the first entry is the directory many/, then ten files (which ten depends on the order the file system lists them in)
    const lines = result.output.split('\n');
    expect(lines[10]).toBe('');
    expect(lines.slice(0, 10)).toEqual([...lines.slice(0, 10)].sort());
    for (const line of lines.slice(0, 10)) expect(line).toMatch(/^many\/f[0-2]\d\.txt$/);
    expect(result.output).toMatch(
      /\[The search stopped after 11 directory entries and \d+\.\d s \(its budget is 11 entries or 10 s\), so it is incomplete\. Narrow the path or the pattern\.\]$/,
    );
    expect((await run(genGlobTool({ hidden }))).output.split('\n')).toHaveLength(30);
  });

  it('errors on a missing search path, naming similar ones', async () => {
    await touch('source/a.ts');
    const result = await glob({ pattern: '*.ts', path: 'sourec' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('source');
  });
});

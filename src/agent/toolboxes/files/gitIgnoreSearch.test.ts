import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { comparePaths } from './toolPaths.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { hasRipgrep } from './grepWithRipgrep.js';
import { genGitRepo } from '#test-helpers/git.js';
import { tempDir } from '#test-helpers/fs.js';

const hasRg = await hasRipgrep();
const engines = ['builtin', ...(hasRg ? (['rg'] as const) : [])] as const;
// the rg engine's cases are left out where ripgrep is not installed: this skipped test says so
if (!hasRg) it.skip('the rg engine cases (skipped: ripgrep is not on PATH; install it to run them)', () => {});

/** .what = a tool call through the files toolbox, as the model makes it */
const call = (
  cwd: string,
  name: 'grep' | 'glob',
  input: Record<string, unknown>,
  engine: 'builtin' | 'rg' = 'builtin',
): Promise<BhrainToolResult> =>
  genFilesToolBox({ grepEngine: engine }).execute({ call: { id: 'call-1', name, input } }, { cwd, log: silentLog, env: {} });

/** .what = files written under a root, each with the given text */
const put = async (root: string, files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
};

/** .what = a real git repository in a temp dir */
const genRepo = async (prefix: string): Promise<string> => genGitRepo({ prefix });

/**
 * .what = a home of our own for the test file's process: HOME and XDG_CONFIG_HOME point at a temp dir holding a global
 *         excludes file; rg (a child process) and the built-in engine both read them from the environment
 */
const useHome = (globalExcludes: string) => {
  const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
  let home = '';
  beforeAll(async () => {
    home = tempDir('bhrain-home-');
    await put(home, { '.config/git/ignore': globalExcludes });
    process.env.HOME = home;
    process.env.XDG_CONFIG_HOME = join(home, '.config');
  });
  afterAll(async () => {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    await rm(home, { recursive: true, force: true });
  });
};

describe('.gitignore-aware search: grep and glob skip what git ignores, in a real git repository', () => {
  let repo: string;
  useHome('*.swp\n');
  beforeAll(async () => {
    repo = await genRepo('bhrain-ignore-');
    await put(repo, {
      '.gitignore': 'dist/\n*.log\n!keep.log\n',
      'dist/bundle.js': 'needle\n',
      'src/app.ts': 'needle\n',
      'src/debug.log': 'needle\n',
      'src/keep.log': 'needle\n',
      'pkg/.gitignore': 'generated/\nlocal.txt\n',
      'pkg/generated/types.ts': 'needle\n',
      'pkg/local.txt': 'needle\n',
      'pkg/index.ts': 'needle\n',
      // the nested rule holds under pkg/ only
      'other/local.txt': 'needle\n',
      'secret.txt': 'needle\n',
      'notes.swp': 'needle\n',
      '.cache/blob.txt': 'needle\n',
      '.env.example': 'needle\n',
      'node_modules/dep/index.js': 'needle\n',
      '.git/needle.txt': 'needle\n',
    });
    await writeFile(join(repo, '.git', 'info', 'exclude'), 'secret.txt\n');
  });
  afterAll(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  const kept = ['.env.example', 'other/local.txt', 'pkg/index.ts', 'src/app.ts', 'src/keep.log'];
  const everything = [
    '.cache/blob.txt',
    '.env.example',
    'dist/bundle.js',
    'node_modules/dep/index.js',
    'notes.swp',
    'other/local.txt',
    'pkg/generated/types.ts',
    'pkg/index.ts',
    'pkg/local.txt',
    'secret.txt',
    'src/app.ts',
    'src/debug.log',
    'src/keep.log',
  ];
  const asMatches = (paths: string[]) => paths.map((path) => `${path}:1:needle`).join('\n');

  it.each(engines)(
    '.gitignore-aware search: grep (%s) skips dist/ from the root .gitignore, a nested .gitignore, .git/info/exclude, the global excludes file, hidden directories, node_modules and .git',
    async (engine) => {
      expect(await call(repo, 'grep', { pattern: 'needle' }, engine)).toEqual({ callId: 'call-1', success: true, output: asMatches(kept) });
    },
  );

  it('.gitignore-aware search: glob skips the same files, and lists dotfiles', async () => {
    expect((await call(repo, 'glob', { pattern: '**/*' })).output).toBe(
      ['.env.example', '.gitignore', 'other/local.txt', 'pkg/.gitignore', 'pkg/index.ts', 'src/app.ts', 'src/keep.log'].join('\n'),
    );
  });

  it.each(engines)(
    '.gitignore-aware search: include_ignored reaches ignored files, hidden directories and node_modules, never .git (grep %s)',
    async (engine) => {
      expect((await call(repo, 'grep', { pattern: 'needle', include_ignored: true }, engine)).output).toBe(asMatches(everything));
    },
  );

  it('.gitignore-aware search: include_ignored reaches ignored files with glob, never .git', async () => {
    expect((await call(repo, 'glob', { pattern: '**/*', include_ignored: true })).output).toBe(
      [...everything, '.gitignore', 'pkg/.gitignore'].sort(comparePaths).join('\n'),
    );
  });

  it.each(engines)(
    '.gitignore-aware search: a path that names an ignored directory is searched, and a subdirectory keeps the rules above it (grep %s)',
    async (engine) => {
      expect((await call(repo, 'grep', { pattern: 'needle', path: 'dist' }, engine)).output).toBe('dist/bundle.js:1:needle');
      expect((await call(repo, 'grep', { pattern: 'needle', path: 'pkg/generated' }, engine)).output).toBe(
        'pkg/generated/types.ts:1:needle',
      );
      expect((await call(repo, 'grep', { pattern: 'needle', path: 'pkg' }, engine)).output).toBe('pkg/index.ts:1:needle');
      expect((await call(repo, 'grep', { pattern: 'needle', path: 'src' }, engine)).output).toBe(asMatches(['src/app.ts', 'src/keep.log']));
      // a file named as the path is searched whatever git says of it
      expect((await call(repo, 'grep', { pattern: 'needle', path: 'src/debug.log' }, engine)).output).toBe('src/debug.log:1:needle');
    },
  );

  it('.gitignore-aware search: a path or pattern that names an ignored directory is listed by glob', async () => {
    expect((await call(repo, 'glob', { pattern: 'dist/**' })).output).toBe('dist/bundle.js');
    expect((await call(repo, 'glob', { pattern: '**/*', path: 'pkg/generated' })).output).toBe('pkg/generated/types.ts');
    expect((await call(repo, 'glob', { pattern: '**/*', path: 'pkg' })).output).toBe('pkg/.gitignore\npkg/index.ts');
  });

  it('.gitignore-aware search: a glob that finds nothing says what was skipped and how to include it', async () => {
    const result = await call(repo, 'glob', { pattern: '**/*.swp' });
    expect(result.output).toBe(
      'No files matched "**/*.swp" under the working directory. (Files git ignores, hidden directories and node_modules are skipped unless the path or pattern names them; include_ignored: true lists them. .git is always skipped.)',
    );
    expect((await call(repo, 'glob', { pattern: '**/*.swp', include_ignored: true })).output).toBe('notes.swp');
  });

  it.each(engines)(
    '.gitignore-aware search: outside a git repository, .gitignore files are not read, as git and rg do (grep %s)',
    async (engine) => {
      const plain = tempDir('bhrain-no-repo-');
      await put(plain, { '.gitignore': 'dist/\n', 'dist/a.js': 'needle\n', 'b.ts': 'needle\n' });
      expect((await call(plain, 'grep', { pattern: 'needle' }, engine)).output).toBe('b.ts:1:needle\ndist/a.js:1:needle');
      expect((await call(plain, 'glob', { pattern: '**/*.js' })).output).toBe('dist/a.js');
      await rm(plain, { recursive: true, force: true });
    },
  );
});

/** .what = a seeded random number source, so the generated tree is the same on every run */
const genRandom = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

/** how many buckets the files' contents fall in: each bucket matches well under grep's 1,000-line cap */
const BUCKETS = 8;

/**
 * .what = a git repository of about 5,000 files with ignore rules of every kind: a root .gitignore (directory, name,
 *         anchored, negated, '**' and path rules), nested .gitignore files, .git/info/exclude, hidden directories,
 *         node_modules, dotfiles and symbolic links
 */
const genIgnoreCorpus = async (root: string, fileCount: number): Promise<void> => {
  const random = genRandom(13);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  // most of the tree is kept, as in a real repository; the rest is skipped for one reason or another
  const tops = [
    'src',
    'src',
    'src',
    'lib',
    'lib',
    'packages',
    'packages',
    'test',
    'docs',
    'dist',
    '.github',
    'node_modules',
    'vendor',
    'build',
    'out',
  ];
  const subs = ['a', 'b', 'gen', 'cache', 'tmp', 'fixtures', '.hidden', 'node_modules', 'out', 'build', 'deep'];
  const extensions = ['ts', 'ts', 'ts', 'js', 'js', 'md', 'json', 'log', 'tmp', 'txt', 'map'];
  const nestedRules = ['*.json', '!keep.json', 'gen/', '/local.txt', 'tmp', '*.map', 'a/b/', '!*.ts', 'fixtures/*.md'];
  const files: Record<string, string> = {
    '.gitignore': [
      '# build output',
      'dist/',
      '*.log',
      '!keep.log',
      '/build',
      'vendor/**',
      '*.tmp',
      '!important.tmp',
      'docs/*.md',
      '!docs/readme.md',
      '**/cache/',
      'out',
      'src/**/fixtures/*.json',
      'lib/gen/',
      '',
    ].join('\n'),
    '.env': 'bucket0\n',
    'docs/readme.md': 'bucket1\n',
    'docs/guide.md': 'bucket2\n',
  };
  let written = 0;
  const directories: string[] = [];
  const visit = (directory: string, depth: number) => {
    directories.push(directory);
    const count = 5 + Math.floor(random() * 25);
    for (let index = 0; index < count && written < fileCount; index++) {
      const name =
        random() < 0.05
          ? pick(['keep.log', 'important.tmp', 'keep.json', 'local.txt', '.eslintrc', 'readme.md'])
          : `f${written}.${pick(extensions)}`;
      files[`${directory}/${name}`] = `bucket${written % BUCKETS}\n`;
      written++;
    }
    if (random() < 0.08) files[`${directory}/.gitignore`] = [pick(nestedRules), pick(nestedRules), pick(nestedRules)].join('\n');
    if (depth < 4)
      for (let child = Math.floor(random() * 4); child > 0 && written < fileCount; child--) visit(`${directory}/${pick(subs)}`, depth + 1);
  };
  while (written < fileCount) visit(pick(tops), 1);
  await put(root, files);
  await writeFile(join(root, '.git', 'info', 'exclude'), '*.txt\n!notes.txt\n');
  // links are listed by glob and never entered or searched by grep
  corpusLinks.loop = `${directories.find((directory) => directory.startsWith('src/') && directory.split('/').length === 2) ?? 'src'}/loop`;
  await symlink(join(root, 'src'), join(root, corpusLinks.loop));
  await symlink(join(root, '.env'), join(root, 'env-link'));
};

/** where the generated tree's looping link is */
const corpusLinks = { loop: '' };

describe('.gitignore-aware search: both engines give identical results on a generated 5,000-file tree with ignores', () => {
  let repo: string;
  useHome('*.map\n');
  beforeAll(async () => {
    repo = await genRepo('bhrain-ignore-corpus-');
    await genIgnoreCorpus(repo, 5_000);
  }, 60_000);
  afterAll(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  const variants: { name: string; input: Record<string, unknown> }[] = [
    { name: 'the whole tree', input: {} },
    { name: 'a subdirectory', input: { path: 'src' } },
    { name: 'a name glob', input: { glob: '*.ts' } },
    { name: 'a glob that picks ignored files', input: { glob: '*.log' } },
    { name: 'an excluding glob', input: { glob: '!*.md' } },
    { name: 'an anchored glob', input: { glob: 'src/**' } },
    { name: 'include_ignored', input: { include_ignored: true } },
  ];
  // without rg there is nothing to compare the built-in engine with
  it.skipIf(!hasRg).each(variants)(
    '.gitignore-aware search: grep with rg and with the built-in engine gives identical output: $name',
    async ({ input }) => {
      let matched = 0;
      for (let bucket = 0; bucket < BUCKETS; bucket++) {
        const viaRg = await call(repo, 'grep', { pattern: `^bucket${bucket}$`, ...input }, 'rg');
        const viaBuiltin = await call(repo, 'grep', { pattern: `^bucket${bucket}$`, ...input }, 'builtin');
        expect(viaRg.output).not.toContain('Showing the first');
        expect(viaBuiltin).toEqual(viaRg);
        matched += viaRg.output.split('\n').filter((line) => line.includes(':1:')).length;
      }
      expect(matched).toBeGreaterThan(0);
    },
  );

  it.skipIf(!hasRg)(
    '.gitignore-aware search: glob lists exactly the files rg --files lists (and the links, which rg leaves out), with and without include_ignored',
    async () => {
      const rgFiles = (args: string[]) =>
        execFileSync('rg', ['--files', '--no-config', '--hidden', ...args], { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
          .split('\n')
          .filter(Boolean);
      const skipping = rgFiles(['--no-ignore-dot', '--glob', '!node_modules', '--glob', '!.*/', '--glob', '!.git']);
      const all = rgFiles(['--no-ignore', '--glob', '!.git']);
      expect(skipping.length).toBeGreaterThan(500);
      expect(all.length).toBeGreaterThan(skipping.length + 1_000);
      const links = ['env-link', corpusLinks.loop];
      // buckets under the 1,000-path cap: generated names by their last digit, and every other name
      const buckets = [
        ...Array.from({ length: 10 }, (_, digit) => ({
          pattern: `**/f*${digit}.*`,
          holds: (name: string) => new RegExp(`^f\\d*${digit}\\.`).test(name),
        })),
        { pattern: '**/[!f]*', holds: (name: string) => !name.startsWith('f') },
      ];
      for (const [listed, includeIgnored] of [
        [skipping, false],
        [all, true],
      ] as const)
        for (const bucket of buckets) {
          const expected = [...listed, ...links].filter((path) => bucket.holds(path.slice(path.lastIndexOf('/') + 1))).sort(comparePaths);
          const result = await call(repo, 'glob', { pattern: bucket.pattern, include_ignored: includeIgnored });
          expect(expected.length).toBeLessThanOrEqual(1_000);
          expect({
            bucket: bucket.pattern,
            includeIgnored,
            output: result.output.split('\n').filter((line) => !line.startsWith('No files')),
          }).toEqual({
            bucket: bucket.pattern,
            includeIgnored,
            output: expected,
          });
        }
    },
  );
});

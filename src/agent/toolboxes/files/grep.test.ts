import { access, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolResult } from '../../tool/BhrainToolBox.js';
import { genFilesToolBox } from './genFilesToolBox.js';
import { genGrepTool } from './grep.js';
import { genHiddenPathsOf } from './hiddenPaths.js';
import { hasRipgrep } from './grepWithRipgrep.js';
import { tempDir } from '#test-helpers/fs.js';

const hasRg = await hasRipgrep();
const engines = ['builtin', ...(hasRg ? (['rg'] as const) : [])] as const;
// the rg engine's cases are left out where ripgrep is not installed: this skipped test says so
if (!hasRg) it.skip('the rg engine cases (skipped: ripgrep is not on PATH; install it to run them)', () => {});

// one tree for the two grep describes below, built once
let cwd: string;
const grepWith =
  (engine: 'builtin' | 'rg') =>
  (input: Record<string, unknown>, options: { cwd?: string } = {}): Promise<BhrainToolResult> =>
    genFilesToolBox({ grepEngine: engine }).execute(
      { call: { id: 'call-1', name: 'grep', input } },
      { cwd: options.cwd ?? cwd, log: silentLog, env: {} },
    );
const grep = grepWith('builtin');
const put = async (path: string, content: string | Buffer) => {
  await mkdir(dirname(join(cwd, path)), { recursive: true });
  await writeFile(join(cwd, path), content);
};

beforeAll(async () => {
  cwd = tempDir('bhrain-grep-');
  await put('src/a.ts', 'import x from "y";\nexport const match = 1;\n// no hit here\nexport function foo() { return "match"; }\n');
  await put('src/b.tsx', 'export const View = () => <div>match</div>;');
  await put('src/lib/deep.ts', 'const MATCH_UPPER = 2;\nconst caféMatch = "é";\n');
  await put('src/a/inner.ts', 'match in a directory named a\n');
  await put('src/a.txt', 'match in a.txt\n');
  await put('src/dos.ts', 'first match\r\nsecond\r\nthird match\r\n');
  await put('src/bom.ts', '\uFEFFmatch after a byte-order mark\n');
  await put('src/long.ts', `const long = "${'x'.repeat(3_000)} match";\n`);
  await put('src/emoji.md', '🙂 match 🙂\n');
  await put('src/empty.ts', '');
  await put('.hidden/h.ts', 'hidden match\n');
  await put('.git/config', 'match inside .git\n');
  await put('node_modules/dep/index.js', 'module.exports = "match";\n');
  await put('assets/logo.bin', Buffer.concat([Buffer.from('match\n'), Buffer.from([0, 1, 2, 3])]));
  await put('big/huge.txt', `match\n${'y'.repeat(11 * 1024 * 1024)}\n`);
  await put('many/lines.txt', Array.from({ length: 1_500 }, (_, i) => `match ${i + 1}`).join('\n') + '\n');
  // the cap across files rg searches in parallel: 1,500 matches (collected whole, then sorted), and 12,000 (past what
  // is collected: searched again in path order)
  for (let dir = 0; dir < 30; dir++)
    for (let file = 0; file < 10; file++) {
      await put(`spread/d${dir}/f${file}.txt`, Array.from({ length: 5 }, (_, line) => `spread ${dir} ${file} ${line}`).join('\n'));
      await put(`flood/d${dir}/f${file}.txt`, Array.from({ length: 40 }, (_, line) => `flood ${dir} ${file} ${line}`).join('\n'));
    }
  await symlink(join(cwd, 'src', 'lib'), join(cwd, 'linked'));
  await symlink(join(cwd, 'src'), join(cwd, 'src', 'lib', 'loop'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('grep', () => {
  it('grep returns matching lines and paths as path:line:text', async () => {
    const result = await grep({ pattern: 'match', path: 'src', glob: '*.ts' });
    expect(result.success).toBe(true);
    expect(result.output.split('\n').slice(0, 4)).toEqual([
      'src/a/inner.ts:1:match in a directory named a',
      'src/a.ts:2:export const match = 1;',
      'src/a.ts:4:export function foo() { return "match"; }',
      'src/bom.ts:1:match after a byte-order mark',
    ]);
    expect(result.output).toContain('src/dos.ts:3:third match\n');
    expect(result.output).not.toContain('b.tsx');
  });

  it('grep with no match is a success that says so', async () => {
    expect(await grep({ pattern: 'zzz_not_there', path: 'src' })).toEqual({
      callId: 'call-1',
      success: true,
      output: 'No matches for "zzz_not_there" in src.',
    });
  });

  it('skips .git, hidden directories and node_modules (unless named), binary files and files over 10 MB', async () => {
    const result = await grep({ pattern: 'match' });
    expect(result.output).not.toContain('.git/');
    expect(result.output).not.toContain('.hidden/');
    expect(result.output).not.toContain('node_modules');
    expect(result.output).not.toContain('logo.bin');
    expect(result.output).not.toContain('huge.txt');
    expect((await grep({ pattern: 'hidden match', glob: '.hidden/**' })).output).toBe('.hidden/h.ts:1:hidden match');
    expect((await grep({ pattern: 'hidden match', path: '.hidden' })).output).toBe('.hidden/h.ts:1:hidden match');
    expect((await grep({ pattern: 'match', path: 'node_modules' })).output).toBe('node_modules/dep/index.js:1:module.exports = "match";');
    expect((await grep({ pattern: 'exports', glob: 'node_modules/**' })).output).toBe(
      'node_modules/dep/index.js:1:module.exports = "match";',
    );
  });

  it('caps at 1000 matches with a notice', async () => {
    const result = await grep({ pattern: 'match', path: 'many' });
    const lines = result.output.split('\n');
    expect(lines[0]).toBe('many/lines.txt:1:match 1');
    expect(lines[999]).toBe('many/lines.txt:1000:match 1000');
    expect(result.output).toContain('Showing the first 1,000 matches; there are more');
  });

  it('cuts matching lines at 500 chars', async () => {
    const result = await grep({ pattern: 'long', path: 'src/long.ts' });
    expect(result.output).toBe(`src/long.ts:1:const long = "${'x'.repeat(500 - 14)}… [line cut at 500 chars]`);
  });

  it.each(engines)('answers an invalid regex with an error result quoting the regex error (%s)', async (engine) => {
    const result = await grepWith(engine)({ pattern: 'foo(bar', path: 'src' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('Invalid regex "foo(bar"');
    expect(result.output).toMatch(/Unterminated group|unclosed group/);
  });

  it.each(engines)('passes shell metacharacters as a plain pattern: nothing is executed (%s)', async (engine) => {
    for (const pattern of ['$(touch pwned)', '`touch pwned2`', 'x; touch pwned3', "'; touch pwned4 #"]) {
      const result = await grepWith(engine)({ pattern, path: 'src' });
      expect(result.success).toBe(true);
    }
    for (const name of ['pwned', 'pwned2', 'pwned3', 'pwned4'])
      for (const directory of [cwd, join(cwd, 'src'), process.cwd()]) await expect(access(join(directory, name))).rejects.toThrow();
  });

  it.each(engines)('does not follow symbolic links below the path, as rg without -L (%s)', async (engine) => {
    // linked -> src/lib, and src/lib/loop -> src: neither is entered; a link named as path is searched
    expect((await grepWith(engine)({ pattern: 'MATCH_UPPER' })).output).toBe('src/lib/deep.ts:1:const MATCH_UPPER = 2;');
    expect((await grepWith(engine)({ pattern: 'MATCH_UPPER', path: 'linked' })).output).toBe('linked/deep.ts:1:const MATCH_UPPER = 2;');
  });

  it('the built-in walk stops at its entry budget with a notice', async () => {
    const notice = '[The search stopped after 3 directory entries (its budget), so it is incomplete. Narrow the path or add a glob.]';
    const result = await genGrepTool({ engine: 'builtin', hidden: genHiddenPathsOf({}), maxWalkEntries: 3 }).execute(
      { pattern: 'match', path: 'src' },
      { cwd, log: silentLog, env: {}, callId: 'c' },
    );
    expect(result.success).toBe(true);
    expect(result.output.endsWith(`\n\n${notice}`) || result.output.endsWith(` ${notice.slice(1, -1)}`)).toBe(true);
    // which three entries are read first depends on the order the file system lists them in: what is shown is a
    // part of what the whole search finds
    const whole = new Set((await grep({ pattern: 'match', path: 'src' })).output.split('\n'));
    const shown = result.output
      .split('\n\n')[0]
      .split('\n')
      .filter((line) => /:\d+:/.test(line));
    for (const line of shown) expect(whole).toContain(line);
  });

  it('errors on a missing search path, naming similar ones', async () => {
    const result = await grep({ pattern: 'x', path: 'scr' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('src');
  });
});

describe('grep: rg and the built-in engine agree', () => {
  const parityCases: { name: string; input: Record<string, unknown> }[] = [
    { name: 'the whole tree', input: { pattern: 'match' } },
    { name: 'a subdirectory', input: { pattern: 'match', path: 'src' } },
    { name: 'a single file', input: { pattern: 'match', path: 'src/dos.ts' } },
    { name: 'a name glob', input: { pattern: 'match', glob: '*.ts' } },
    { name: 'an anchored glob', input: { pattern: 'match', glob: 'src/**/*.ts' } },
    { name: 'a brace glob', input: { pattern: 'match', glob: '*.{tsx,md}' } },
    { name: 'an excluding glob', input: { pattern: 'match', glob: '!*.ts' } },
    { name: 'node_modules named', input: { pattern: 'match', path: 'node_modules' } },
    { name: 'case-insensitive', input: { pattern: '(?i)MATCH', path: 'src' } },
    { name: 'anchors and classes', input: { pattern: '^export\\s+\\w+', path: 'src' } },
    { name: 'non-ASCII', input: { pattern: 'café|🙂', path: 'src' } },
    { name: 'a line end', input: { pattern: 'match$', path: 'src' } },
    { name: 'the cap', input: { pattern: 'match', path: 'many' } },
    { name: 'the cap across 300 files (1,500 matches)', input: { pattern: 'spread', path: 'spread' } },
    { name: 'the cap across 300 files (12,000 matches)', input: { pattern: 'flood', path: 'flood' } },
    { name: 'a long line', input: { pattern: 'long', path: 'src' } },
    { name: 'no match', input: { pattern: 'zzz_nothing' } },
  ];
  it.skipIf(!hasRg).each(parityCases)('gives identical output with rg and the built-in engine: $name', async ({ input }) => {
    const viaRg = await grepWith('rg')(input);
    const viaBuiltin = await grepWith('builtin')(input);
    expect(viaRg.success).toBe(true);
    expect(viaBuiltin).toEqual(viaRg);
  });

  it.skipIf(!hasRg)('gives identical output with both engines when cwd is outside the searched tree', async () => {
    const elsewhere = tempDir('bhrain-grep-elsewhere-');
    const input = { pattern: 'match', path: join(cwd, 'src') };
    const viaRg = await grepWith('rg')(input, { cwd: elsewhere });
    expect(viaRg.output).toContain(`${join(cwd, 'src', 'a.ts')}:2:`);
    expect(await grepWith('builtin')(input, { cwd: elsewhere })).toEqual(viaRg);
    await rm(elsewhere, { recursive: true, force: true });
  });
});

describe('a runaway regex in the built-in grep', () => {
  let cwd: string;
  // (a+)+$ against many a's and then a b tries every way to split the a's: 2^60 steps, for ever in practice
  const RUNAWAY = '(a+)+$';
  beforeAll(async () => {
    cwd = tempDir('bhrain-grep-runaway-');
    await writeFile(join(cwd, 'early.txt'), 'aaa\n');
    await writeFile(join(cwd, 'trap.txt'), `${'a'.repeat(60)}b\n`);
  });
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('stops at the deadline with a result that names the file and says to simplify the regex or install ripgrep', async () => {
    const startedAt = Date.now();
    const result = await genGrepTool({ engine: 'builtin', hidden: genHiddenPathsOf({}), timeoutMs: 1_000 }).execute(
      { pattern: RUNAWAY },
      { cwd, log: silentLog, env: {}, callId: 'c' },
    );
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    expect(result).toEqual({
      success: false,
      output:
        'early.txt:1:aaa\n\n[The regex was still running on trap.txt when the search stopped after 1 s: it took too long. ' +
        'Nested quantifiers such as (a+)+ or (.*)* can take exponential time on some lines; simplify the pattern, ' +
        'or install ripgrep (rg), whose regex engine runs in linear time and which grep then uses. These results are partial.]',
    });
  });

  it('stops at once when the run is aborted', async () => {
    const controller = new AbortController();
    const pending = genFilesToolBox({ grepEngine: 'builtin' }).execute(
      { call: { id: 'call-1', name: 'grep', input: { pattern: RUNAWAY, path: 'trap.txt' } } },
      { cwd, log: silentLog, env: {}, signal: controller.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const abortedAt = Date.now();
    controller.abort();
    expect(await pending).toEqual({ callId: 'call-1', success: false, output: 'grep was cancelled.' });
    expect(Date.now() - abortedAt).toBeLessThan(500);
  });
});

// the packed package as rhachet v1.45.2 finds, links, runs and loads it (test/rhachet/rhachetPaths.ts follows
// rhachet's own lookups), in a consumer repository where the tarball is a devDependency of the git root
import { mkdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { genCliEnv, runBhrain } from '../acceptance/runCli.js';
import { useStandin } from '#standin/useStandin.js';
import {
  discoverBrains,
  discoverRolePackages,
  genConsumerRepo,
  installedPackageJsonPath,
  introspectRepo,
  isRelativeSymlink,
  linkRole,
  loadLinkedRoleHooks,
  PACKAGE_ROOT,
  packTarball,
  rhachetRunHeader,
  runRhachet,
} from './rhachetPaths.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
beforeEach(async () => {
  home = tempDir('bhrain-home-');
});
const envFor = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);
const sentTools = (index: number): string[] =>
  (standin().requests[index].body.tools ?? []).map(
    (tool: { name?: string; function?: { name: string } }) => tool.name ?? tool.function?.name,
  );
const REF_LINES = /\nepisode: [0-9a-f]{64}\nseries: ([0-9a-f]{64})\nrecord: \S+\n$/;

/** a consumer repository whose installed package.json is changed by `edit` (what rhachet reads is on disk) */
const genConsumerRepoWith = async (edit: (pkg: Record<string, any>) => void): Promise<string> => {
  const repo = await genConsumerRepo();
  const path = installedPackageJsonPath(repo);
  const pkg = JSON.parse(await readFile(path, 'utf8'));
  edit(pkg);
  await writeFile(path, JSON.stringify(pkg, null, 2));
  return repo;
};

let repo: string;
beforeAll(async () => {
  repo = await genConsumerRepo();
  await linkRole({ cwd: repo, repo: 'bhrain', role: 'brain' });
});

describe('rhachet roles link / init --roles bhrain/brain', () => {
  it('finds the package as `rhachet-roles-bhrain/package.json` from the git root and reads rhachet.repo.yml with its schema', () => {
    const { manifests, errors } = discoverRolePackages(repo);
    expect(errors).toEqual([]);
    expect(manifests.map(({ slug, roles }) => ({ slug, roles: roles.map((role) => role.slug) }))).toEqual([
      { slug: 'bhrain', roles: ['brain'] },
    ]);
  });

  it('links .agent/ as rhachet does: readmes, a .gitignore of *, and relative symlinks into node_modules', async () => {
    const role = join(repo, '.agent', 'repo=bhrain', 'role=brain');
    for (const link of ['readme.md', 'briefs', 'skills']) expect(isRelativeSymlink(join(role, link))).toBe(true);
    expect(await readlink(join(role, 'skills'))).toBe('../../../node_modules/rhachet-roles-bhrain/src/roles/brain/skills');
    expect(isRelativeSymlink(join(repo, '.agent', 'repo=bhrain', 'readme.md'))).toBe(true);
    expect(await readFile(join(repo, '.agent', 'repo=bhrain', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    expect((await stat(join(role, 'skills', 'act.sh'))).mode & 0o111).toBeTruthy();
    expect(await readFile(join(role, 'briefs', 'howto.continue-with-refs.md'), 'utf8')).toMatch(/--on-series/);
  });

  it('fails as rhachet reports it ("lack rhachet.repo.yml") when the package does not export "./package.json"', async () => {
    const broken = await genConsumerRepoWith((pkg) => delete pkg.exports['./package.json']);
    expect(discoverRolePackages(broken).errors.map((each) => (each.error as NodeJS.ErrnoException).code)).toEqual([
      'ERR_PACKAGE_PATH_NOT_EXPORTED',
    ]);
    await expect(linkRole({ cwd: broken, repo: 'bhrain', role: 'brain' })).rejects.toThrow(/lack rhachet\.repo\.yml/);
  });
});

describe('rhachet init --hooks / rhx init brain', () => {
  it('resolves the entry with require.resolve (CommonJS conditions), import()s it, and reads the role and its onBoot hook', async () => {
    const { roles, errors } = await loadLinkedRoleHooks(repo);
    expect(errors).toEqual([]);
    expect(roles).toEqual([
      {
        repo: 'bhrain',
        slug: 'brain',
        hooks: { onBoot: [{ command: './node_modules/.bin/rhachet roles boot --role brain', timeout: 'PT60S' }] },
      },
    ]);
  });

  it('fails to load as rhachet reports it ("No "exports" main defined") when "." has only an import condition', async () => {
    const broken = await genConsumerRepoWith((pkg) => (pkg.exports['.'] = { types: './dist/index.d.ts', import: './dist/index.js' }));
    await linkRole({ cwd: broken, repo: 'bhrain', role: 'brain' });
    const { roles, errors } = await loadLinkedRoleHooks(broken);
    expect(roles).toEqual([]);
    expect(errors.map((each) => ({ phase: each.phase, message: each.error.message }))).toEqual([
      { phase: 'load', message: expect.stringMatching(/No "exports" main defined/) },
    ]);
  });
});

describe('rhachet repo introspect (the author side)', () => {
  it.each([
    { where: 'this checkout', root: () => PACKAGE_ROOT },
    { where: 'the packed package, as installed', root: () => join(repo, 'node_modules', 'rhachet-roles-bhrain') },
  ])(
    'passes its gates in $where, and would write exactly the rhachet.repo.yml shipped; package.json needs nothing added',
    async ({ root }) => {
      const { manifest, packageJsonAdditions } = introspectRepo(root());
      expect(manifest).toBe(await readFile(join(root(), 'rhachet.repo.yml'), 'utf8'));
      expect(packageJsonAdditions).toEqual([]);
    },
  );
});

describe('rhachet run --repo bhrain --skill act|ask', () => {
  it("stdout: rhachet's header, the answer, then the refs after a blank line; exit 0; nothing else", async () => {
    standin().script({ text: 'The answer is 42.' });
    const run = await runRhachet({
      cwd: repo,
      args: ['--repo', 'bhrain', '--skill', 'act', '--arch', 'bhrain.struct.v1', '--atom', 'qwen', '--input', 'what is the answer?'],
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith(`${rhachetRunHeader('act')}The answer is 42.\n`)).toBe(true);
    expect(run.stdout.slice(rhachetRunHeader('act').length + 'The answer is 42.\n'.length)).toMatch(new RegExp(`^${REF_LINES.source}`));
    // rhachet drops the skill's stderr when it succeeds
    expect(run.stderr).toBe('');
    expect(JSON.stringify(standin().requests[0].body)).toContain('what is the answer?');
  });

  it('the series printed after the answer continues through rhachet (--on-series), and --quiet leaves the answer alone', async () => {
    standin().script({ text: 'PLAN: write notes.md' }, { text: 'done as planned' });
    const plan = await runRhachet({
      cwd: repo,
      args: ['--repo', 'bhrain', '--skill', 'ask', '--atom', 'qwen', '--input', 'plan the notes'],
      env: envFor(),
    });
    const series = REF_LINES.exec(plan.stdout)![1];
    const act = await runRhachet({
      cwd: repo,
      args: ['--repo', 'bhrain', '--skill', 'act', '--atom', 'qwen', '--on-series', series, '--quiet', '--input', 'now do it'],
      env: envFor(),
    });
    expect(act.code).toBe(0);
    expect(act.stdout).toBe(`${rhachetRunHeader('act')}done as planned\n`);
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('PLAN: write notes.md');
  });

  it('stdin passes through as the task (echo task | rhx ask)', async () => {
    standin().script({ text: 'done from stdin' });
    const run = await runRhachet({
      cwd: repo,
      args: ['--skill', 'ask', '--atom', 'qwen', '--quiet'],
      env: envFor(),
      stdin: 'summarize the repo\n',
    });
    expect(run).toEqual({ code: 0, stdout: `${rhachetRunHeader('ask')}done from stdin\n`, stderr: '' });
    expect(JSON.stringify(standin().requests[0].body)).toContain('summarize the repo');
  });

  it('exit codes pass through: a bad flag is 2, and rhachet then shows our message under its "blocked by constraints"', async () => {
    const run = await runRhachet({
      cwd: repo,
      args: ['--repo', 'bhrain', '--skill', 'act', '--atom', 'gpt-5', '--input', 'x'],
      env: envFor(),
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe(rhachetRunHeader('act'));
    expect(run.stderr).toMatch(/✋ blocked by constraints\n\nbhrain act: unknown atom 'gpt-5': did you mean 'openai\/gpt-5'\?/);
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'true' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'true' } }] },
    );
    const capped = await runRhachet({
      cwd: repo,
      args: ['--skill', 'act', '--atom', 'qwen', '--max-iterations', '1', '--input', 'loop'],
      env: envFor(),
    });
    expect(capped.code).toBe(3);
    expect(capped.stderr).toMatch(/💥 failed with an error[\s\S]*^series: [0-9a-f]{64}$/m);
  });

  it('--output json --output-file: stdout is not JSON through rhachet (its header), the file is the one result object with the refs', async () => {
    standin().script({ text: 'ok' });
    const file = join(repo, 'bhrain.json');
    const run = await runRhachet({
      cwd: repo,
      args: ['--skill', 'ask', '--atom', 'qwen', '--output', 'json', '--output-file', file, '--input', 'hi'],
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(() => JSON.parse(run.stdout)).toThrow();
    const json = JSON.parse(await readFile(file, 'utf8'));
    expect(json).toMatchObject({ type: 'result', output: 'ok', exitCode: 0, series: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(run.stdout).toBe(`${rhachetRunHeader('ask')}${JSON.stringify(json)}\n`);
    const record = await stat(json.record);
    expect(record.isDirectory()).toBe(true);
  });

  it('act changes files with tools; the same request under ask is refused for writes', async () => {
    const writeTurn = { toolCalls: [{ name: 'write', input: { path: 'hello.txt', content: 'hello' } }] };
    standin().script(writeTurn, { text: 'wrote hello.txt' });
    const act = await runRhachet({
      cwd: repo,
      args: ['--repo', 'bhrain', '--skill', 'act', '--atom', 'claude/haiku', '--input', 'create hello.txt'],
      env: envFor(),
    });
    expect(act.code).toBe(0);
    expect(await readFile(join(repo, 'hello.txt'), 'utf8')).toBe('hello');
    expect(sentTools(0)).toEqual(['read', 'write', 'edit', 'glob', 'grep', 'bash', 'websearch', 'task']);
    await rm(join(repo, 'hello.txt'));
    standin().reset();
    standin().script(writeTurn, { text: 'I cannot write in ask mode' });
    const ask = await runRhachet({
      cwd: repo,
      args: ['--repo', 'bhrain', '--skill', 'ask', '--atom', 'claude/haiku', '--input', 'create hello.txt'],
      env: envFor(),
    });
    expect(ask.code).toBe(0);
    expect(sentTools(0)).toEqual(['read', 'glob', 'grep', 'websearch']);
    await expect(stat(join(repo, 'hello.txt'))).rejects.toThrow();
    expect(JSON.stringify(standin().requests[1].body)).toMatch(/tool not found: 'write'/);
  });

  it("a run whose progress would pass rhachet's 1 MiB stderr buffer is not killed: progress stops at 256 KiB, the run finishes", async () => {
    // 9,000 failing reads of 100-character paths make ~1.2 MB of progress lines in 10 turns
    const turn = {
      toolCalls: Array.from({ length: 900 }, (_, index) => ({ name: 'read', input: { path: `${'p'.repeat(90)}/${index}.txt` } })),
    };
    const turns = () => [...Array.from({ length: 10 }, () => turn), { text: 'finished' }];
    standin().script(...turns());
    // the same run outside rhachet writes more than spawnSync's buffer holds
    const direct = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--max-iterations', '40', '--input', 'read them all'],
      cwd: repo,
      env: envFor(),
    });
    expect(direct.code).toBe(0);
    expect(Buffer.byteLength(direct.stderr)).toBeGreaterThan(1024 * 1024);
    standin().reset();
    standin().script(...turns());
    const hosted = await runRhachet({
      cwd: repo,
      args: ['--skill', 'ask', '--atom', 'qwen', '--max-iterations', '40', '--input', 'read them all'],
      env: envFor(),
    });
    expect(hosted.code).toBe(0);
    expect(hosted.stdout).toMatch(/finished\n\nepisode: /);
  }, 60_000);
});

describe('brains rhachet finds by itself', () => {
  it("a rhachet-brains-* package that re-exports getBrainAtomsByBhrain and getBrainReplsByBhrain is found by rhachet's discovery", async () => {
    const consumer = await genConsumerRepo();
    const brains = join(consumer, 'node_modules', 'rhachet-brains-bhrain-struct');
    await mkdir(brains);
    await writeFile(
      join(brains, 'package.json'),
      JSON.stringify({ name: 'rhachet-brains-bhrain-struct', type: 'module', exports: { '.': { default: './index.js' } } }),
    );
    await writeFile(join(brains, 'index.js'), "export { getBrainAtomsByBhrain, getBrainReplsByBhrain } from 'rhachet-roles-bhrain';\n");
    const pkg = JSON.parse(await readFile(join(consumer, 'package.json'), 'utf8'));
    await writeFile(
      join(consumer, 'package.json'),
      JSON.stringify({ ...pkg, dependencies: { 'rhachet-brains-bhrain-struct': 'file:./brains' } }),
    );
    const { atoms, repls } = await discoverBrains(consumer);
    expect(atoms.map((atom) => atom.slug)).toContain('bhrain/claude/sonnet');
    expect(repls.map((repl) => repl.slug)).toContain('bhrain/bhrain.struct.v1@qwen/qwen3-coder-plus');
    expect(atoms.every((atom) => atom.repo === 'bhrain' && !('act' in atom))).toBe(true);
    // our own package, a roles package, is not scanned for brains
    expect(await discoverBrains(repo)).toEqual({ atoms: [], repls: [] });
  });
});

describe('the tarball', () => {
  it('ships the manifest, the skills (executable), the entry both conditions resolve to, and package.json as an export', async () => {
    const tarball = await packTarball();
    expect((await stat(tarball)).size).toBeGreaterThan(0);
    const pkg = JSON.parse(await readFile(installedPackageJsonPath(repo), 'utf8'));
    expect(pkg.exports).toEqual({ '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' });
  });
});

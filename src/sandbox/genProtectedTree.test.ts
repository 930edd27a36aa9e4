// what a later program trusts is protected by kind, at any depth: the model's bash (in the real sandbox) can neither make
// nor change it, whatever the name of the directories on the way, and nothing it made is lost (it is in quarantine)
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';

import { silentLog } from '../core/contract/BrainContext.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';
import { PROTECTED_ANYWHERE, PROTECTED_AT_ROOT, PROTECTED_IN_GIT_DIR, findProtected } from './protectedPaths.js';
import { genProtectedTree } from './genProtectedTree.js';
import { tempDir } from '#test-helpers/fs.js';

const root = tempDir('bhrain-protected-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let made = 0;
/** .what = a fresh workspace (a git repository) and a bhrain home for its quarantine */
const genWorkspace = () => {
  const base = join(root, String(made++));
  const cwd = join(base, 'ws');
  mkdirSync(cwd, { recursive: true });
  git(cwd, 'init', '-q', '-b', 'main');
  return { cwd, home: join(base, 'home') };
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, stdio: 'pipe' }).toString();

/** .what = runs one bash command through a bash toolbox, as the loop would, in the default sandbox */
const runBash = async (cwd: string, home: string, command: string) => {
  const result = await genBashToolBox().execute(
    { call: { id: 'call-1', name: 'bash', input: { command, timeout_ms: 20_000 } } },
    { cwd, log: silentLog, env: { ...process.env, BHRAIN_HOME: home } },
  );
  return result as {
    output: string;
    success: boolean;
    protectedChanges?: Array<{ path: string; action: string; quarantine?: string; runs?: string[] }>;
  };
};

/** .what = every file under a directory, with its content, for "nothing lost" and "nothing changed" checks */
const filesUnder = (dir: string): Record<string, string> => {
  const found: Record<string, string> = {};
  const visit = (at: string, shown: string) => {
    const stats = lstatSync(at, { throwIfNoEntry: false });
    if (stats?.isDirectory()) for (const name of readdirSync(at)) visit(join(at, name), shown ? `${shown}/${name}` : name);
    else if (stats?.isFile()) found[shown] = readFileSync(at, 'utf8');
  };
  visit(dir, '');
  return found;
};

describe('the one definition of what is protected', () => {
  it('every place bhrain reads a project configuration from is protected at any depth', async () => {
    const { PROJECT_CONFIG_PATHS } = await import('./protectedPaths.js');
    const read = [
      PROJECT_CONFIG_PATHS.settings,
      PROJECT_CONFIG_PATHS.mcpServers,
      ...PROJECT_CONFIG_PATHS.skills,
      ...PROJECT_CONFIG_PATHS.agents,
    ];
    for (const path of read)
      for (const at of ['', 'pkg/', 'a/b/c/'])
        expect(
          findProtected('/ws', `/ws/${at}${path}/x`.replace(/\/x$/, path.endsWith('.json') ? '' : '/x')),
          `${at}${path}`,
        ).not.toBeNull();
  });

  it('names the parts of any git directory, the repository root only for what a home directory holds', () => {
    expect(findProtected('/ws', '/ws/vendor/lib/.git/hooks/pre-commit')?.shown).toBe('vendor/lib/.git/hooks/');
    expect(findProtected('/ws', '/ws/.git/modules/lib/config')?.shown).toBe('.git/modules/lib/config');
    expect(findProtected('/ws', '/ws/.git/x/config')?.shown).toBe('.git/x/config');
    expect(findProtected('/ws', '/ws/.git/commondir')?.shown).toBe('.git/commondir');
    expect(findProtected('/ws', '/ws/.git/objects/ab/cdef')).toBeNull();
    expect(findProtected('/ws', '/ws/.git/index')).toBeNull();
    expect(findProtected('/ws', '/ws/.bashrc')?.shown).toBe('.bashrc');
    expect(findProtected('/ws', '/ws/pkg/.bashrc')).toBeNull();
    expect(findProtected('/ws', '/ws/src/config')).toBeNull();
  });
});

describe('bash cannot make or change a protected entry at any depth', () => {
  it('at a depth of 1 to 3, in a package, a nested repository and a submodule: removed or put back, the model told, nothing lost', async () => {
    const { cwd, home } = genWorkspace();
    mkdirSync(join(cwd, 'pkg/.vscode'), { recursive: true });
    writeFileSync(join(cwd, 'pkg/.vscode/settings.json'), '{}\n');
    mkdirSync(join(cwd, 'vendor/lib'), { recursive: true });
    git(join(cwd, 'vendor/lib'), 'init', '-q');
    const nestedConfig = readFileSync(join(cwd, 'vendor/lib/.git/config'), 'utf8');
    const before = git(cwd, 'status', '--porcelain', '--ignored', '--untracked-files=all');
    const result = await runBash(
      cwd,
      home,
      [
        'mkdir -p pkg/.bhrain a/b/.claude && echo planted > pkg/.bhrain/settings.json && echo planted > a/b/.claude/settings.json',
        'echo planted > pkg/.vscode/settings.json',
        'printf "[core]\\n\\tfsmonitor = touch /tmp/x\\n" >> vendor/lib/.git/config; echo planted > vendor/lib/.git/hooks/post-checkout',
        'echo x > .git/commondir',
        'true',
      ].join('; '),
    );
    expect(existsSync(join(cwd, 'pkg/.bhrain'))).toBe(false);
    expect(existsSync(join(cwd, 'a/b/.claude'))).toBe(false);
    expect(readFileSync(join(cwd, 'pkg/.vscode/settings.json'), 'utf8')).toBe('{}\n');
    expect(readFileSync(join(cwd, 'vendor/lib/.git/config'), 'utf8')).toBe(nestedConfig);
    expect(existsSync(join(cwd, 'vendor/lib/.git/hooks/post-checkout'))).toBe(false);
    expect(existsSync(join(cwd, '.git/commondir'))).toBe(false);
    expect(git(cwd, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe(before);
    expect(result.output).toMatch(
      /note: pkg\/\.bhrain is a protected path \(bhrain reads as its settings.*this command made it, so bhrain removed it/,
    );
    expect(result.output).toMatch(/note: pkg\/\.vscode is a protected path .*put it back as it was/);
    expect(result.output).toMatch(/note: \.git\/commondir is a protected path/);
    // the nested repository's existing config and hooks are bound read-only: the command's writes fail there
    expect(result.output).toMatch(/vendor\/lib\/\.git\/(config|hooks).*Read-only file system/);
    // nothing the command made is lost: the quarantine holds each version
    const quarantined = Object.entries(filesUnder(join(home, 'quarantine')));
    expect(
      quarantined
        .filter(([, content]) => content === 'planted\n')
        .map(([path]) => path.replace(/^[^/]+\/\d+\//, ''))
        .sort(),
    ).toEqual(['a/b/.claude/settings.json', 'pkg/.bhrain/settings.json', 'pkg/.vscode/settings.json']);
  });

  it('a repository the command makes (git init, a scaffold) is kept, and what in it runs code is named', async () => {
    const { cwd, home } = genWorkspace();
    const result = await runBash(cwd, home, 'git init -q app && git -C app config core.fsmonitor "touch /tmp/mark" && ls app/.git/config');
    expect(result.success).toBe(true);
    expect(readFileSync(join(cwd, 'app/.git/config'), 'utf8')).toMatch(/fsmonitor/);
    expect(result.protectedChanges).toEqual([
      { path: 'app/.git', trustedBy: 'git', action: 'repository', runs: ['config core.fsmonitor'] },
    ]);
    expect(result.output).toMatch(
      /note: this command made a git repository at app\/\.git; what in it runs code when git runs there \(config core\.fsmonitor\) is named to the user/,
    );
    // a later command in it is the model's business: its configuration is not put back
    const later = await runBash(cwd, home, 'git -C app config user.name me && git -C app config user.name');
    expect(later.output).toMatch(/me/);
    expect(later.protectedChanges).toBeUndefined();
  });

  it('a directory holding a nested protected entry can still be removed (npm ci removes node_modules)', async () => {
    const { cwd, home } = genWorkspace();
    mkdirSync(join(cwd, 'node_modules/strnum/.vscode'), { recursive: true });
    writeFileSync(join(cwd, 'node_modules/strnum/.vscode/launch.json'), '{}');
    const result = await runBash(cwd, home, 'rm -rf node_modules && echo gone');
    expect(result.output).toMatch(/gone/);
    expect(existsSync(join(cwd, 'node_modules'))).toBe(false);
    expect(result.protectedChanges).toBeUndefined();
  });

  it('a protected entry someone else makes between two calls is theirs: the next sweep keeps it, and protects it from then on', async () => {
    const { cwd } = genWorkspace();
    const tree = genProtectedTree({ workspace: cwd, quarantineDir: join(cwd, '..', 'q') });
    mkdirSync(join(cwd, 'pkg/.idea'), { recursive: true });
    writeFileSync(join(cwd, 'pkg/.idea/workspace.xml'), '<mine/>');
    // the next call starts well after
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(tree.sweep(Date.now())).toEqual([]);
    expect(readFileSync(join(cwd, 'pkg/.idea/workspace.xml'), 'utf8')).toBe('<mine/>');
    const since = Date.now();
    writeFileSync(join(cwd, 'pkg/.idea/workspace.xml'), '<planted/>');
    expect(tree.sweep(since)).toMatchObject([{ path: 'pkg/.idea', action: 'restored' }]);
    expect(readFileSync(join(cwd, 'pkg/.idea/workspace.xml'), 'utf8')).toBe('<mine/>');
  });
});

/** .what = every protected kind, as the path of a file a model would plant for it, below a directory `at` */
const KINDS: Array<{ kind: string; plant: (at: string) => string; atRootOnly?: boolean; inRepository?: boolean }> = [
  ...PROTECTED_ANYWHERE.map((kind) => ({
    kind: kind.name,
    plant: (at: string) => (['.mcp.json', '.gitmodules'].includes(kind.name) ? `${at}${kind.name}` : `${at}${kind.name}/x`),
  })),
  ...PROTECTED_AT_ROOT.map((kind) => ({ kind: kind.name, plant: () => kind.name, atRootOnly: true })),
  ...PROTECTED_IN_GIT_DIR.map((kind) => ({
    kind: `.git/${kind.name}`,
    plant: (at: string) => (['hooks', 'info'].includes(kind.name) ? `${at}.git/${kind.name}/x` : `${at}.git/${kind.name}`),
    inRepository: true,
  })),
];

/** .what = ways bash has of making a file, each a command that plants `target` with `content` */
const WAYS: Record<string, (target: string) => string> = {
  redirect: (target) => `mkdir -p "$(dirname '${target}')" && printf planted > '${target}'`,
  append: (target) => `mkdir -p "$(dirname '${target}')" && printf planted >> '${target}'`,
  cp: (target) => `printf planted > /tmp/p && mkdir -p "$(dirname '${target}')" && cp /tmp/p '${target}'`,
  mv: (target) => `printf planted > /tmp/p && mkdir -p "$(dirname '${target}')" && mv -f /tmp/p '${target}'`,
  'ln -s': (target) => `printf planted > /tmp/p && mkdir -p "$(dirname '${target}')" && ln -sf /tmp/p '${target}'`,
  'tar x': (target) =>
    `mkdir -p "/tmp/t/$(dirname '${target}')" && printf planted > '/tmp/t/${target}' && tar -C /tmp/t -cf /tmp/t.tar '${target}' && tar -xf /tmp/t.tar`,
  'git config': (target) =>
    target.endsWith('/config')
      ? `git --git-dir='${target.slice(0, -'/config'.length)}' config core.fsmonitor planted`
      : `printf planted > '${target}'`,
  'git -C': (target) =>
    /\.git\/config$/.test(target)
      ? `git -C '${target.replace(/\/?\.git\/config$/, '') || '.'}' config core.fsmonitor planted`
      : `printf planted > '${target}'`,
};

describe('generated: every protected kind, at the root and 1 to 3 deep under any names, by every way bash has, fails closed', () => {
  // names of directories on the way: anything a file system takes, but what would itself be protected or special
  const dirName = fc
    .string({ unit: fc.constantFrom(...'abz019_-. ééü空 '.split('')), minLength: 1, maxLength: 8 })
    .filter((name) => name.trim() === name && !['.', '..'].includes(name) && !name.startsWith('.') && !findProtected('/w', `/w/${name}`));

  it('no plant survives its call, an existing one keeps its content, and git status shows nothing new', async () => {
    const attempts = { tried: 0, escaped: [] as string[] };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...KINDS),
        fc.array(dirName, { minLength: 0, maxLength: 3 }),
        fc.constantFrom(...Object.keys(WAYS)),
        fc.boolean(),
        async (kind, path, way, existing) => {
          const dirs = kind.atRootOnly ? [] : path;
          const at = dirs.map((name) => `${name}/`).join('');
          const { cwd, home } = genWorkspace();
          // a part of a git directory: the repository is there (nested, at this depth) before the run
          if (kind.inRepository && at) {
            mkdirSync(join(cwd, at), { recursive: true });
            git(join(cwd, at), 'init', '-q');
          }
          const target = kind.plant(at);
          // what git reads in its own directory must hold what git takes, so only git's own are there before
          if (existing && !kind.inRepository && !existsSync(join(cwd, target))) {
            mkdirSync(join(cwd, target, '..'), { recursive: true });
            writeFileSync(join(cwd, target), 'original');
          }
          const before = lstatSync(join(cwd, target), { throwIfNoEntry: false }) ? readFileSync(join(cwd, target), 'utf8') : null;
          const status = git(cwd, 'status', '--porcelain', '--ignored', '--untracked-files=all');
          await runBash(cwd, home, WAYS[way](target));
          attempts.tried++;
          const found = lstatSync(join(cwd, target), { throwIfNoEntry: false });
          const after = !found
            ? null
            : found.isFile()
              ? readFileSync(join(cwd, target), 'utf8')
              : `a ${found.isSymbolicLink() ? 'symlink' : 'directory'}`;
          if (after !== before) attempts.escaped.push(`${way} ${target}: ${before} → ${after}`);
          expect(git(cwd, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe(status);
        },
      ),
      { numRuns: 120, seed: 45 },
    );
    expect(attempts.tried).toBeGreaterThanOrEqual(120);
    expect(attempts.escaped).toEqual([]);
  }, 600_000);
});

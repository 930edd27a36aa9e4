// rhachet v1.45.2's lookups and effects for a roles package, written from its source as facts (ehmpathy/rhachet@60ae13c;
// ../shared/rhachet-facts.md sums them up). rhachet is not in the npm registry, so these tests cannot run it; each step
// below does what rhachet does, with the same node APIs, against the packed tarball installed in a consumer repository
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import * as z from 'zod';

import { runProcess, type CliRun } from '../acceptance/runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const exec = promisify(execFile);
export const PACKAGE_ROOT = join(import.meta.dirname, '..', '..');
const PACKAGE_NAME = 'rhachet-roles-bhrain';

/** the raw schema of rhachet.repo.yml (src/domain.operations/manifest/getRoleRegistryManifest.ts) */
const dirs = z.union([z.string(), z.array(z.string())]);
const schemaManifest = z.object({
  slug: z.string(),
  readme: z.string(),
  roles: z.array(
    z.object({
      slug: z.string(),
      readme: z.string(),
      briefs: z.object({ dirs }),
      skills: z.object({ dirs }),
      inits: z.object({ dirs: dirs.optional(), exec: z.array(z.string()).optional() }).optional(),
      boot: z.string().optional(),
      keyrack: z.string().optional(),
    }),
  ),
});
export type RoleRegistryManifest = z.infer<typeof schemaManifest>;

let packed: Promise<string> | null = null;
/** .what = `npm pack` of this checkout (its built dist/), once per test file: the tarball a user installs */
export const packTarball = (): Promise<string> =>
  (packed ??= (async () => {
    const dir = tempDir('bhrain-pack-');
    const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PACKAGE_ROOT });
    return join(dir, stdout.trim().split('\n').pop()!);
  })());

/**
 * .what = a consumer repository with the packed tarball installed as a devDependency of its git root
 * .note = the tarball's files are unpacked into node_modules/rhachet-roles-bhrain as npm places them; its dependencies
 *         are this checkout's installed ones, linked beside it (a hoisted install, without the network a test may not use)
 */
export const genConsumerRepo = async (input: { tarball?: string } = {}): Promise<string> => {
  const tarball = input.tarball ?? (await packTarball());
  const repo = tempDir('bhrain-consumer-');
  await exec('git', ['init', '-q'], { cwd: repo });
  await writeFile(
    join(repo, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, devDependencies: { [PACKAGE_NAME]: `file:${tarball}` } }, null, 2),
  );
  const installed = join(repo, 'node_modules', PACKAGE_NAME);
  await mkdir(installed, { recursive: true });
  await exec('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  const { dependencies } = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const name of Object.keys(dependencies)) {
    await mkdir(join(repo, 'node_modules', name, '..'), { recursive: true });
    await symlink(join(PACKAGE_ROOT, 'node_modules', name), join(repo, 'node_modules', name));
  }
  return repo;
};

/** .what = the package.json a package was installed with, to edit in a test (what rhachet reads is on disk) */
export const installedPackageJsonPath = (repo: string): string => join(repo, 'node_modules', PACKAGE_NAME, 'package.json');

/** .what = rhachet.repo.yml read and checked against rhachet's schema (getRoleRegistryManifest) */
export const readRoleRegistryManifest = (packageRoot: string): RoleRegistryManifest => {
  const path = resolve(packageRoot, 'rhachet.repo.yml');
  if (!existsSync(path)) throw new Error('rhachet.repo.yml not found');
  const parsed = schemaManifest.safeParse(parseYaml(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`rhachet.repo.yml has invalid schema: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
};

/**
 * .what = how `roles link` and `init --roles` find roles packages (getRoleRegistriesByConfigImplicit): every
 *         rhachet-roles-* name among the git root's dependencies and devDependencies, resolved as `<name>/package.json`
 *         from that package.json, and its rhachet.repo.yml beside it; a package that fails is reported as lacking one
 */
export const discoverRolePackages = (gitRoot: string) => {
  const pkg = JSON.parse(readFileSync(join(gitRoot, 'package.json'), 'utf8')) as { dependencies?: object; devDependencies?: object };
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((name) => name.startsWith('rhachet-roles-'));
  const require = createRequire(`${gitRoot}/package.json`);
  const manifests: Array<RoleRegistryManifest & { packageRoot: string }> = [];
  const errors: Array<{ packageName: string; error: Error }> = [];
  for (const packageName of names) {
    try {
      const packageRoot = resolve(require.resolve(`${packageName}/package.json`), '..');
      manifests.push({ ...readRoleRegistryManifest(packageRoot), packageRoot });
    } catch (error) {
      errors.push({ packageName, error: error as Error });
    }
  }
  return { manifests, errors };
};

// the readme rhachet writes once in .agent/ and .agent/repo=.this/ (getAgentReadmeTemplates.ts; its text does not matter here)
const AGENT_README = 'this dir hosts the .skills and .briefs useful to any agent, human or robot, when at work in this repo\n';
const REPO_THIS_README = 'this directory contains the .skills and .briefs scoped to this specific @gitroot repository\n';
// .agent/repo=<slug>/.gitignore (findsertRepoGitignore.ts): everything in it is links, tracked by package.json instead
const REPO_GITIGNORE =
  '# .what = tells git to ignore this dir\n# .why = keeps git history clean\n#   - just symlinks here, no real code\n#   - package.json already tracks the version\n# .note = safe to delete; run `rhachet init --roles` to bring it back\n*\n';

/** a relative symlink, replacing what was there (symlinkFile.ts, symlinkResourceDirectories.ts) */
const linkRelative = async (source: string, target: string, type: 'file' | 'dir') => {
  await mkdir(resolve(target, '..'), { recursive: true });
  await symlink(relative(resolve(target, '..'), source), target, type);
};

/**
 * .what = `rhachet roles link --repo <repo> --role <role>` (invokeRolesLink → getRoleBySpecifier → execRoleLink), in cwd
 * .why = what a consumer's .agent/ holds after the readme's first step; throws rhachet's failure when it would fail
 */
export const linkRole = async (input: { cwd: string; repo: string; role: string }): Promise<void> => {
  const { manifests, errors } = discoverRolePackages(input.cwd);
  if (!manifests.length)
    throw new Error(
      `No role packages found. Ensure rhachet-roles-* packages are installed and have rhachet.repo.yml (Some packages lack rhachet.repo.yml: ${errors
        .map((each) => `${each.packageName}: ${each.error.message}`)
        .join('; ')})`,
    );
  const registry = manifests.find((manifest) => manifest.slug === input.repo);
  const role = registry?.roles.find((each) => each.slug === input.role);
  if (!registry || !role) throw new Error(`role ${input.repo}/${input.role} not found`);
  const agentDir = resolve(input.cwd, '.agent');
  const repoDir = resolve(agentDir, `repo=${registry.slug}`);
  const roleDir = resolve(repoDir, `role=${role.slug}`);
  await mkdir(resolve(agentDir, 'repo=.this'), { recursive: true });
  await mkdir(roleDir, { recursive: true });
  if (!existsSync(resolve(agentDir, 'readme.md'))) await writeFile(resolve(agentDir, 'readme.md'), AGENT_README);
  if (!existsSync(resolve(agentDir, 'repo=.this', 'readme.md')))
    await writeFile(resolve(agentDir, 'repo=.this', 'readme.md'), REPO_THIS_README);
  await linkRelative(resolve(registry.packageRoot, registry.readme), resolve(repoDir, 'readme.md'), 'file');
  await writeFile(resolve(repoDir, '.gitignore'), REPO_GITIGNORE);
  await linkRelative(resolve(registry.packageRoot, role.readme), resolve(roleDir, 'readme.md'), 'file');
  // one dir is linked as briefs/ (skills/) itself; several are linked by their names inside it
  for (const kind of ['briefs', 'skills'] as const) {
    const sources = [role[kind].dirs].flat().map((dir) => resolve(registry.packageRoot, dir));
    if (sources.length === 1) await linkRelative(sources[0], resolve(roleDir, kind), 'dir');
    else for (const source of sources) await linkRelative(source, resolve(roleDir, kind, source.split('/').pop()!), 'dir');
  }
};

/**
 * .what = how `rhachet init --hooks` (and `rhx init <role>`) loads each linked repo's package (getLinkedRolesWithHooks →
 *         importPackageExports): `require.resolve('rhachet-roles-<repo>')` from the git root (CommonJS conditions), then
 *         `import()` of that file, the default export's keys hoisted, then getRoleRegistry() and each linked role's hooks
 */
export const loadLinkedRoleHooks = async (gitRoot: string) => {
  const agentDir = join(gitRoot, '.agent');
  const roles: Array<{ repo: string; slug: string; hooks: unknown }> = [];
  const errors: Array<{ repo: string; phase: 'load' | 'use'; error: Error }> = [];
  for (const repoDir of readdirSync(agentDir).filter((name) => name.startsWith('repo=') && name !== 'repo=.this')) {
    const repo = repoDir.replace('repo=', '');
    let module: Record<string, unknown>;
    try {
      module = await importPackageExports(`rhachet-roles-${repo}`, `${gitRoot}/package.json`);
    } catch (error) {
      errors.push({ repo, phase: 'load', error: error as Error });
      continue;
    }
    try {
      if (typeof module.getRoleRegistry !== 'function') throw new Error(`package rhachet-roles-${repo} does not export getRoleRegistry`);
      const registry = module.getRoleRegistry() as { roles: Array<{ slug: string; hooks?: { onBrain?: unknown } }> };
      for (const roleDir of readdirSync(join(agentDir, repoDir)).filter((name) => name.startsWith('role='))) {
        const role = registry.roles.find((each) => each.slug === roleDir.replace('role=', ''));
        if (!role) throw new Error(`role ${roleDir.replace('role=', '')} not found in registry ${repo}`);
        if (role.hooks?.onBrain) roles.push({ repo, slug: role.slug, hooks: role.hooks.onBrain });
      }
    } catch (error) {
      errors.push({ repo, phase: 'use', error: error as Error });
    }
  }
  return { roles, errors };
};

/** .what = a package's exports as rhachet's importPackageExports gives them: require.resolve, import(), default's keys hoisted */
const importPackageExports = async (packageName: string, fromPackageJson: string): Promise<Record<string, unknown>> => {
  const namespace = (await import(pathToFileURL(createRequire(fromPackageJson).resolve(packageName)).href)) as Record<string, unknown>;
  const fromDefault = typeof namespace.default === 'object' && namespace.default !== null ? namespace.default : {};
  return { ...fromDefault, ...namespace };
};

/**
 * .what = how rhachet finds brains by itself (getAvailableBrains → discoverBrainPackages → asBrainsFromPackageExports):
 *         every rhachet-brains-* name among the dependencies and devDependencies of cwd's package.json, loaded as above;
 *         each export named getBrainAtomsBy… / getBrainReplsBy… is called and its array collected
 */
export const discoverBrains = async (cwd: string) => {
  const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as { dependencies?: object; devDependencies?: object };
  const atoms: Array<{ repo: string; slug: string }> = [];
  const repls: Array<{ repo: string; slug: string }> = [];
  for (const name of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((each) => each.startsWith('rhachet-brains-')))
    for (const [key, value] of Object.entries(await importPackageExports(name, `${cwd}/package.json`))) {
      if (typeof value !== 'function') continue;
      if (key.startsWith('getBrainAtomsBy')) atoms.push(...(value() as typeof atoms));
      if (key.startsWith('getBrainReplsBy')) repls.push(...(value() as typeof repls));
    }
  return { atoms, repls };
};

/** a role of a RoleRegistry, as introspect reads it */
interface IntrospectedRole {
  slug: string;
  readme: { uri: string };
  briefs: { dirs: { uri: string } | Array<{ uri: string }> };
  skills: { dirs: { uri: string } | Array<{ uri: string }> };
  hooks?: { onBrain?: Record<string, Array<{ command: string }> | undefined> };
}

const filesUnder = (dir: string): string[] =>
  !existsSync(dir)
    ? []
    : readdirSync(dir).flatMap((entry) => {
        const path = resolve(dir, entry);
        return statSync(path).isDirectory() ? filesUnder(path) : [path];
      });

/**
 * .what = `rhachet repo introspect` in a package's git root (invokeRepoIntrospect): require() of package.json's main,
 *         getRoleRegistry(), the four gates, then the manifest it would write and what it would add to package.json
 * .note = each gate throws rhachet's reason: a .sh skill not executable; a role with briefs or skills whose onBoot hooks
 *         do not run `roles boot --role <slug>`; an npx rhachet/rhx hook; a .md.min brief without its .md
 */
export const introspectRepo = (packageRoot: string): { manifest: string; packageJsonAdditions: string[] } => {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    name: string;
    main?: string;
    files?: string[];
    exports?: Record<string, unknown>;
  };
  if (!pkg.name.startsWith('rhachet-roles-')) throw new Error('repo introspect must be run inside a rhachet-roles-* package');
  const exported = createRequire(resolve(packageRoot, 'package.json'))(resolve(packageRoot, pkg.main ?? 'index.js')) as {
    getRoleRegistry?: () => unknown;
  };
  if (!exported.getRoleRegistry) throw new Error('package does not export getRoleRegistry');
  const registry = exported.getRoleRegistry() as { slug: string; readme: { uri: string }; roles: IntrospectedRole[] };
  const uris = (value: { uri: string } | Array<{ uri: string }>) => [value].flat().map((dir) => dir.uri);
  for (const role of registry.roles) {
    const notExecutable = uris(role.skills.dirs)
      .flatMap(filesUnder)
      .filter((path) => {
        if (!path.endsWith('.sh')) return false;
        try {
          accessSync(path, constants.X_OK);
          return false;
        } catch {
          return true;
        }
      });
    if (notExecutable.length) throw new Error(`skills not executable: ${notExecutable.join(', ')}`);
    const onBoot = role.hooks?.onBrain?.onBoot ?? [];
    if (!onBoot.length) throw new Error(`${role.slug}: no-hook-declared`);
    if (!onBoot.some((hook) => /\broles\s+boot\b/.test(hook.command))) throw new Error(`${role.slug}: absent-roles-boot-command`);
    if (!onBoot.some((hook) => /\broles\s+boot\b/.test(hook.command) && new RegExp(`--role\\s+${role.slug}(?:\\s|$)`).test(hook.command)))
      throw new Error(`${role.slug}: wrong-role-name`);
    for (const hooks of Object.values(role.hooks?.onBrain ?? {}))
      for (const hook of hooks ?? [])
        if (/\bnpx\b.*?\b(rhachet|rhx)\b/.test(hook.command)) throw new Error(`${role.slug}: npx in hook '${hook.command}'`);
    const briefs = uris(role.briefs.dirs).flatMap(filesUnder);
    const orphans = briefs.filter((path) => path.endsWith('.md.min') && !briefs.includes(path.slice(0, -'.min'.length)));
    if (orphans.length) throw new Error(`orphan minified briefs: ${orphans.join(', ')}`);
  }
  // castIntoRoleRegistryManifest + serializeRoleRegistryManifest: paths relative to the package root, one dir as a string
  const relativeDirs = (value: { uri: string } | Array<{ uri: string }>) => {
    const paths = uris(value).map((uri) => relative(packageRoot, uri));
    return paths.length === 1 ? paths[0] : paths;
  };
  const manifest = stringifyYaml(
    {
      slug: registry.slug,
      readme: relative(packageRoot, registry.readme.uri),
      roles: registry.roles.map((role) => ({
        slug: role.slug,
        readme: relative(packageRoot, role.readme.uri),
        briefs: { dirs: relativeDirs(role.briefs.dirs) },
        skills: { dirs: relativeDirs(role.skills.dirs) },
      })),
    },
    { lineWidth: 0 },
  );
  // findsertPackageJsonManifestConfig
  const packageJsonAdditions = [
    ...(pkg.files && !pkg.files.includes('rhachet.repo.yml') ? ['package.json:.files += "rhachet.repo.yml"'] : []),
    ...(pkg.exports && !pkg.exports['./package.json'] ? ['package.json:.exports += "./package.json"'] : []),
  ];
  return { manifest, packageJsonAdditions };
};

/**
 * .what = `rhachet run <args>` in cwd (rhachetRun.mjs: rhachet's discovery, header, quoting, spawnSync and failure report)
 * .note = args are the argv after `run`, e.g. ['--repo', 'bhrain', '--skill', 'act', '--atom', 'qwen', '--input', 'hi']
 */
export const runRhachet = (input: {
  cwd: string;
  args: string[];
  env: Record<string, string | undefined>;
  stdin?: string;
}): Promise<CliRun> =>
  runProcess({
    command: process.execPath,
    args: [join(import.meta.dirname, 'rhachetRun.mjs'), ...input.args],
    cwd: input.cwd,
    env: input.env,
    stdin: input.stdin,
  });

/** .what = whether a path is a symlink whose target is written relative to it (as rhachet links) */
export const isRelativeSymlink = (path: string): boolean => lstatSync(path).isSymbolicLink() && !readlinkSync(path).startsWith('/');

/** .what = the header rhachet prints on stdout before the skill's own output */
export const rhachetRunHeader = (skill: string): string => `\n🪨 run solid skill repo=bhrain/role=brain/skill=${skill}\n\n`;

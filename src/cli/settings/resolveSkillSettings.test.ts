import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { genRulesGuard } from '../../agent/permission/genRulesGuard.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { genSkillCommand } from '../genSkillCommand.js';
import { resolveSkillSettings } from './resolveSkillSettings.js';
import { pickExplicitFlags } from './settingsTable.js';
import { tempDir } from '#test-helpers/fs.js';

/**
 * .what = a real git repository with a subdirectory, and a home of its own: XDG_CONFIG_HOME puts the user file at
 *         <home>/config/bhrain/settings.json
 */
const given = async (files: { user?: unknown; project?: unknown; sub?: unknown } = {}) => {
  const root = tempDir('bhrain-settings-');
  const repo = join(root, 'repo');
  const sub = join(repo, 'packages', 'app');
  await mkdir(sub, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  const home = join(root, 'home');
  const userFile = join(home, 'config', 'bhrain', 'settings.json');
  const projectFile = join(repo, '.bhrain', 'settings.json');
  const subFile = join(sub, '.bhrain', 'settings.json');
  const write = async (path: string, content: unknown) => {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  };
  if (files.user !== undefined) await write(userFile, files.user);
  if (files.project !== undefined) await write(projectFile, files.project);
  if (files.sub !== undefined) await write(subFile, files.sub);
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'config') };
  return { root, repo, sub, home, env, userFile, projectFile, subFile, write };
};

describe('settings precedence: default < user < project < env < flag, one layer at a time', () => {
  it('settings precedence: with no layer, each setting is bhrain default', async () => {
    const { repo, env } = await given();
    const { values, sources } = await resolveSkillSettings({ cwd: repo }, { env });
    expect(values).toEqual({
      atom: undefined,
      model: undefined,
      baseUrl: undefined,
      permission: 'allowAll',
      allowedTools: [],
      disallowedTools: [],
      additionalDirectories: [],
      checkpoints: true,
      checkpointIgnoredMaxBytes: 0,
      sandbox: 'workspace-write',
      denyRead: [],
      allowUnixSockets: [],
      allowNetwork: false,
      allowedDomains: [],
      maskEnv: {},
      passEnv: [],
      maxIterations: 50,
      memory: 'summarize-on-limit',
      timeoutMs: undefined,
      maxBudgetUsd: undefined,
      maxTokens: undefined,
      maxWallTime: undefined,
      projectInstructions: true,
      skills: true,
      appendSystemPrompt: undefined,
    });
    expect(new Set(Object.values(sources))).toEqual(new Set(['default']));
  });

  it('settings precedence: the user file beats the defaults', async () => {
    const { repo, env, userFile } = await given({ user: { atom: 'qwen', maxIterations: 10, maxWallTime: '10m', memory: 'truncate' } });
    const { values, sources } = await resolveSkillSettings({ cwd: repo }, { env });
    expect(values).toMatchObject({ atom: 'qwen', maxIterations: 10, maxWallTime: 600_000, memory: 'truncate' });
    expect(sources).toMatchObject({
      atom: `user:${userFile}`,
      maxIterations: `user:${userFile}`,
      maxWallTime: `user:${userFile}`,
      permission: 'default',
    });
  });

  it('settings precedence: the project file beats the user file', async () => {
    const { sub, env, userFile, projectFile } = await given({
      user: { atom: 'qwen', maxIterations: 10 },
      project: { atom: 'claude/haiku' },
    });
    const { values, sources } = await resolveSkillSettings({ cwd: sub }, { env });
    expect(values).toMatchObject({ atom: 'claude/haiku', maxIterations: 10 });
    expect(sources).toMatchObject({ atom: `project:${projectFile}`, maxIterations: `user:${userFile}` });
  });

  it('settings precedence: the env beats the project file (BHRAIN_ATOM, BHRAIN_MODEL)', async () => {
    const { repo, env, projectFile } = await given({ project: { atom: 'claude/haiku', model: 'claude-haiku-4-5', maxTokens: 1000 } });
    const { values, sources } = await resolveSkillSettings(
      { cwd: repo },
      { env: { ...env, BHRAIN_ATOM: 'qwen', BHRAIN_MODEL: 'qwen3-coder-plus' } },
    );
    expect(values).toMatchObject({ atom: 'qwen', model: 'qwen3-coder-plus', maxTokens: 1000 });
    expect(sources).toMatchObject({ atom: 'env:BHRAIN_ATOM', model: 'env:BHRAIN_MODEL', maxTokens: `project:${projectFile}` });
  });

  it('settings precedence: a flag beats the env', async () => {
    const { repo, env } = await given({ project: { maxIterations: 20 } });
    const { values, sources } = await resolveSkillSettings(
      { cwd: repo, flags: { atom: 'claude/sonnet', maxIterations: '5' } },
      { env: { ...env, BHRAIN_ATOM: 'qwen' } },
    );
    expect(values).toMatchObject({ atom: 'claude/sonnet', maxIterations: 5 });
    expect(sources).toMatchObject({ atom: 'flag', maxIterations: 'flag' });
  });
});

describe('settings files: where they are found', () => {
  it('settings files: project files from the repository root down to cwd, the nearest winning', async () => {
    const { sub, env, projectFile, subFile } = await given({ project: { atom: 'qwen', maxIterations: 7 }, sub: { maxIterations: 3 } });
    const { values, sources, files } = await resolveSkillSettings({ cwd: sub }, { env });
    expect(values).toMatchObject({ atom: 'qwen', maxIterations: 3 });
    expect(sources).toMatchObject({ atom: `project:${projectFile}`, maxIterations: `project:${subFile}` });
    expect(files.filter((file) => file.found).map((file) => file.path)).toEqual([projectFile, subFile]);
  });

  it('settings files: outside a repository only cwd has a project file; one above it is not read', async () => {
    const { root, env, write } = await given();
    const outside = join(root, 'loose', 'dir');
    await mkdir(outside, { recursive: true });
    await write(join(root, 'loose', '.bhrain', 'settings.json'), { atom: 'qwen' });
    expect((await resolveSkillSettings({ cwd: outside }, { env })).sources.atom).toBe('default');
    await write(join(outside, '.bhrain', 'settings.json'), { atom: 'claude' });
    expect((await resolveSkillSettings({ cwd: outside }, { env })).values.atom).toBe('claude');
  });

  it('settings files: BHRAIN_CONFIG_DIR moves the user file', async () => {
    const { root, repo, env, write } = await given({ user: { atom: 'qwen' } });
    const configDir = join(root, 'elsewhere');
    await write(join(configDir, 'settings.json'), { atom: 'claude/opus' });
    const { values, sources } = await resolveSkillSettings({ cwd: repo }, { env: { ...env, BHRAIN_CONFIG_DIR: configDir } });
    expect(values.atom).toBe('claude/opus');
    expect(sources.atom).toBe(`user:${join(configDir, 'settings.json')}`);
  });
});

describe('settings validation: a bad file is an error naming the file, the key and the choices', () => {
  const rejects = async (files: Parameters<typeof given>[0], pattern: (paths: Awaited<ReturnType<typeof given>>) => RegExp | string) => {
    const paths = await given(files);
    const resolving = resolveSkillSettings({ cwd: paths.repo }, { env: paths.env });
    await expect(resolving).rejects.toThrow(BadRequestError);
    await expect(resolveSkillSettings({ cwd: paths.repo }, { env: paths.env })).rejects.toThrow(pattern(paths));
  };

  it('settings validation: an unknown key names the file, the key, a near key and the valid keys', async () => {
    await rejects(
      { project: { atomm: 'qwen' } },
      ({ projectFile }) =>
        `unknown key 'atomm' in ${projectFile}: did you mean 'atom'? valid keys are atom, model, baseUrl, permission, allowedTools, disallowedTools, additionalDirectories, checkpoints, checkpointIgnoredMaxBytes, sandbox, allowNetwork, network, maxIterations, memory, timeoutMs, maxBudgetUsd, maxTokens, maxWallTime, projectInstructions, skills, systemPrompt, appendSystemPrompt, store, mcpServers, hooks, enableAllProjectMcpServers, enabledMcpjsonServers, trustedProjects`,
    );
  });

  it('settings validation: a bad value names the key and the valid choices, even when a flag overrides it', async () => {
    const paths = await given({ user: { sandbox: 'of', maxIterations: 0 } });
    const resolving = resolveSkillSettings({ cwd: paths.repo, flags: { sandbox: 'off' } }, { env: paths.env });
    await expect(resolving).rejects.toThrow(
      `bad value for 'sandbox' in ${paths.userFile}: expected one of read-only, workspace-write, off, or {"mode": "<one of them>", "denyRead": ["~/.config/op"]}, got "of"; bad value for 'maxIterations' in ${paths.userFile}: expected a whole number from 1 to 10000, got 0`,
    );
  });

  it('settings validation: invalid JSON names the file and the line and column', async () => {
    await rejects(
      { project: '{\n  "atom": "qwen",\n}\n' },
      ({ projectFile }) => new RegExp(`^invalid JSON in ${projectFile} at line 3, column 1: `),
    );
  });

  it('settings validation: a file that is not an object, and an unknown atom, name the file', async () => {
    await rejects({ user: '["qwen"]' }, ({ userFile }) => `${userFile} must hold a JSON object of settings`);
    await rejects(
      { project: { atom: 'claude/sonnett' } },
      ({ projectFile }) => `bad value for 'atom' in ${projectFile}: unknown atom 'claude/sonnett': did you mean 'claude/sonnet'?`,
    );
  });

  it('settings validation: a project file may not set baseUrl (it could send the API key elsewhere)', async () => {
    await rejects(
      { project: { baseUrl: { qwen: 'http://evil.example/v1' } } },
      ({ projectFile }) => `baseUrl is not allowed in a project settings file (${projectFile})`,
    );
  });

  it('settings validation: env vars and flags are checked too, each error naming its variable or flag', async () => {
    const { repo, env } = await given();
    await expect(resolveSkillSettings({ cwd: repo }, { env: { ...env, BHRAIN_ATOM: 'gpt' } })).rejects.toThrow(
      /^BHRAIN_ATOM: unknown atom 'gpt'/,
    );
    await expect(resolveSkillSettings({ cwd: repo, flags: { atom: 'qwen', maxWallTime: 'soon' } }, { env })).rejects.toThrow(
      "--max-wall-time must be a duration such as 90s, 10m, 1h or 1500ms, got 'soon'",
    );
    await expect(
      resolveSkillSettings({ cwd: repo, flags: { atom: 'qwen' } }, { env: { ...env, QWEN_BASE_URL: 'localhost:8000' } }),
    ).rejects.toThrow("QWEN_BASE_URL 'localhost:8000' is not an http(s) URL");
  });
});

describe('settings permission: a builtin guard or inline rules in the rules file syntax', () => {
  it('settings permission: inline rules are returned as rules, and work as a rules guard', async () => {
    const rules = { allow: ['bash(npm test*)', 'read'], deny: ['bash(rm *)'] };
    const { repo, env } = await given({ project: { permission: rules } });
    const { values } = await resolveSkillSettings({ cwd: repo }, { env });
    expect(values.permission).toEqual(rules);
    const guard = genRulesGuard(values.permission as typeof rules);
    const decision = await guard.check(
      { call: { id: '1', name: 'bash', input: { command: 'rm -rf dist' } } } as never,
      { cwd: repo } as never,
    );
    expect(decision.decision).toBe('deny');
  });

  it('settings permission: a bad rule, a bad rule kind and an unknown guard are errors naming the key path', async () => {
    const { repo, env, projectFile, write } = await given();
    await write(projectFile, { permission: { deny: ['bash(rm *)', 'bash(rm'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'permission.deny[1]' in ${projectFile}: invalid permission rule 'bash(rm': expected \`tool\` or \`tool(spec)\``,
    );
    await write(projectFile, { permission: { allow: ['read'], ask: ['bash'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `unknown key 'permission.ask' in ${projectFile}: valid keys are allow, prompt, deny`,
    );
    await write(projectFile, { permission: 'readonly' });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'permission' in ${projectFile}: expected allowAll, readOnly, promptForWrites, or inline rules {"allow": [...], "prompt": [...], "deny": [...]}, got "readonly"`,
    );
  });

  it('settings permission: readOnly makes the sandbox read-only unless one is set; ask is always read-only', async () => {
    const { repo, env, projectFile, write } = await given({ project: { permission: 'readOnly' } });
    expect((await resolveSkillSettings({ cwd: repo }, { env })).values).toMatchObject({ permission: 'readOnly', sandbox: 'read-only' });
    // a project's loosening values apply only once the user approves the project (see the approval tests)
    await write(projectFile, { permission: 'allowAll', sandbox: 'off', allowNetwork: true });
    const act = await resolveSkillSettings({ cwd: repo, trustProject: true }, { env });
    expect(act.values).toMatchObject({ permission: 'allowAll', sandbox: 'off', allowNetwork: true });
    expect(act.warnings).toEqual([
      `"sandbox": "off" comes from ${projectFile}, which loosens bhrain's confinement; this project is approved (--trust-project)`,
      `"allowNetwork": true comes from ${projectFile}, which loosens bhrain's confinement; this project is approved (--trust-project)`,
    ]);
    const ask = await resolveSkillSettings({ skill: 'ask', cwd: repo }, { env });
    expect(ask.values).toMatchObject({ permission: 'readOnly', sandbox: 'read-only', allowNetwork: false });
    expect(ask.warnings).toEqual([]);
    await expect(resolveSkillSettings({ skill: 'ask', cwd: repo, flags: { sandbox: 'off' } }, { env })).rejects.toThrow(
      'ask is always read-only: --sandbox off is not allowed (omit it, or pass --sandbox read-only)',
    );
  });
});

describe('settings flags: only flags given explicitly are a layer', () => {
  it("settings flags: commander's defaults (--memory) do not mask the settings file", async () => {
    const { repo, env, projectFile } = await given({ project: { memory: 'truncate', maxIterations: 9 } });
    const command = genSkillCommand('act', async () => 0);
    await command.parseAsync(['--atom', 'qwen', '--max-iterations', '4', 'hi'], { from: 'user' });
    expect(command.opts().memory).toBe('summarize-on-limit');
    const flags = pickExplicitFlags(command);
    expect(flags).toEqual({ atom: 'qwen', maxIterations: '4' });
    const { values, sources } = await resolveSkillSettings({ cwd: repo, flags }, { env });
    expect(values).toMatchObject({ atom: 'qwen', maxIterations: 4, memory: 'truncate' });
    expect(sources).toMatchObject({ atom: 'flag', maxIterations: 'flag', memory: `project:${projectFile}` });
  });

  it('settings flags: baseUrl follows the atom: --base-url, then the supplier env var, then the user file', async () => {
    const { repo, env, userFile } = await given({
      user: { atom: 'qwen', baseUrl: { qwen: 'http://127.0.0.1:8000/v1', claude: 'http://127.0.0.1:4000' } },
    });
    expect((await resolveSkillSettings({ cwd: repo }, { env })).values.baseUrl).toBe('http://127.0.0.1:8000/v1');
    const claude = await resolveSkillSettings({ cwd: repo, flags: { atom: 'claude' } }, { env });
    expect([claude.values.baseUrl, claude.sources.baseUrl]).toEqual(['http://127.0.0.1:4000', `user:${userFile}`]);
    const fromEnv = await resolveSkillSettings(
      { cwd: repo },
      { env: { ...env, QWEN_BASE_URL: 'http://127.0.0.1:9000/v1', ANTHROPIC_BASE_URL: 'http://x' } },
    );
    expect([fromEnv.values.baseUrl, fromEnv.sources.baseUrl]).toEqual(['http://127.0.0.1:9000/v1', 'env:QWEN_BASE_URL']);
    const fromFlag = await resolveSkillSettings(
      { cwd: repo, flags: { baseUrl: 'http://127.0.0.1:1/v1' } },
      { env: { ...env, QWEN_BASE_URL: 'http://127.0.0.1:9000/v1' } },
    );
    expect([fromFlag.values.baseUrl, fromFlag.sources.baseUrl]).toEqual(['http://127.0.0.1:1/v1', 'flag']);
  });
});

describe("approval: a project file may tighten, never loosen, without the user's approval", () => {
  it('approval: unapproved, a looser sandbox, network and guard from the project are ignored, each named with how to approve', async () => {
    const { repo, env, userFile, projectFile } = await given({
      user: { permission: 'promptForWrites' },
      project: { sandbox: 'off', allowNetwork: true, permission: 'allowAll', maxIterations: 7 },
    });
    const resolved = await resolveSkillSettings({ cwd: repo }, { env });
    expect(resolved.values).toMatchObject({
      sandbox: 'workspace-write',
      allowNetwork: false,
      permission: 'promptForWrites',
      maxIterations: 7,
    });
    expect(resolved.sources).toMatchObject({
      sandbox: 'default',
      allowNetwork: 'default',
      permission: `user:${userFile}`,
      maxIterations: `project:${projectFile}`,
    });
    const approve = `approve this project with --trust-project, or add "${repo}" to "trustedProjects" in ${userFile}`;
    expect(resolved.warnings).toEqual([
      `ignored "sandbox": "off" from ${projectFile}: a project file may tighten bhrain's confinement, not loosen it without your approval; sandbox is "workspace-write" (default). To use it, ${approve}`,
      `ignored "allowNetwork": true from ${projectFile}: a project file may tighten bhrain's confinement, not loosen it without your approval; allowNetwork is false (default). To use it, ${approve}`,
      `ignored "permission": "allowAll" from ${projectFile}: a project file may tighten bhrain's confinement, not loosen it without your approval; permission is "promptForWrites" (user:${userFile}). To use it, ${approve}`,
    ]);
    expect(resolved.approval).toEqual({ root: repo, trusted: false, via: null });
  });

  it('approval: a tighter sandbox or guard from the project applies without approval and without a word', async () => {
    const { repo, env } = await given({
      project: { sandbox: 'read-only', permission: { allow: ['read', 'bash(npm test)'], deny: ['bash(rm *)'] } },
    });
    const resolved = await resolveSkillSettings({ cwd: repo }, { env });
    expect(resolved.values).toMatchObject({
      sandbox: 'read-only',
      permission: { allow: ['read', 'bash(npm test)'], deny: ['bash(rm *)'] },
    });
    expect(resolved.warnings).toEqual([]);
  });

  it('approval: allow rules beyond what the user allows loosen the guard; rules within it do not', async () => {
    const { repo, env, projectFile, write } = await given({
      user: { permission: 'readOnly' },
      project: { permission: { allow: ['read', 'grep'] } },
    });
    expect((await resolveSkillSettings({ cwd: repo }, { env })).values.permission).toEqual({ allow: ['read', 'grep'] });
    await write(projectFile, { permission: { allow: ['read', 'write(src/**)'] } });
    const looser = await resolveSkillSettings({ cwd: repo }, { env });
    expect(looser.values.permission).toBe('readOnly');
    expect(looser.warnings[0]).toMatch(/^ignored "permission": \{"allow":\["read","write\(src\/\*\*\)"\]\} from /);
  });

  it('approval: a project rule handing back a hidden path (read(~/.ssh)) loosens even allowAll: ignored unapproved', async () => {
    const { repo, env, projectFile } = await given({ project: { permission: { allow: ['read', 'bash', 'read(~/.ssh)'] } } });
    const resolved = await resolveSkillSettings({ cwd: repo }, { env });
    expect(resolved.values.permission).toBe('allowAll');
    expect(resolved.warnings[0]).toMatch(new RegExp(`^ignored "permission": .+read\\(~/\\.ssh\\).+ from ${projectFile}: `));
    expect((await resolveSkillSettings({ cwd: repo, trustProject: true }, { env })).values.permission).toEqual({
      allow: ['read', 'bash', 'read(~/.ssh)'],
    });
  });

  it("approval: the user approves by the repository root's real path in trustedProjects (~ and symlinks resolved), or by --trust-project", async () => {
    const { root, repo, sub, env, write, userFile } = await given({ project: { sandbox: 'off' } });
    expect((await resolveSkillSettings({ cwd: sub }, { env })).values.sandbox).toBe('workspace-write');
    await write(userFile, { trustedProjects: [repo] });
    const trusted = await resolveSkillSettings({ cwd: sub }, { env });
    expect(trusted.values.sandbox).toBe('off');
    expect(trusted.approval).toEqual({ root: repo, trusted: true, via: 'trustedProjects' });
    // ~ is HOME: a link from it to the repository names the same real path
    execFileSync('ln', ['-s', repo, join(env.HOME, 'link')]);
    await write(userFile, { trustedProjects: ['~/link'] });
    expect((await resolveSkillSettings({ cwd: repo }, { env })).approval.trusted).toBe(true);
    await write(userFile, { trustedProjects: [join(root, 'elsewhere')] });
    expect((await resolveSkillSettings({ cwd: repo }, { env })).approval.trusted).toBe(false);
    expect((await resolveSkillSettings({ cwd: repo, trustProject: true }, { env })).approval).toEqual({
      root: repo,
      trusted: true,
      via: '--trust-project',
    });
  });

  it('approval: a project file cannot approve itself: an approval key in it is exit 2, naming the key and where it belongs', async () => {
    for (const key of ['trustedProjects', 'enableAllProjectMcpServers', 'enabledMcpjsonServers']) {
      const { repo, env, projectFile } = await given({ project: { [key]: key === 'enableAllProjectMcpServers' ? true : ['.'] } });
      const error = await resolveSkillSettings({ cwd: repo }, { env }).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as Error).message).toBe(
        `${key} is not allowed in a project settings file (${projectFile}): a repository cannot approve itself (its MCP servers run commands outside the sandbox, and its settings could loosen bhrain's confinement). Set it in your user settings file, or pass --trust-project`,
      );
    }
  });
});

describe('network by domain: --allow-domain and network.allowedDomains', () => {
  it('given network.allowedDomains in the user and the project file, then the nearer file wins, with its source, lower-cased and without repeats', async () => {
    const { repo, env, projectFile } = await given({
      user: { network: { allowedDomains: ['user.example'] } },
      project: { network: { allowedDomains: ['Registry.npmjs.org', '*.github.com', 'registry.npmjs.org'] } },
    });
    // approval: a project's hosts beyond the user's loosen the network, so the project must be approved
    const { values, sources, warnings } = await resolveSkillSettings({ cwd: repo, trustProject: true }, { env });
    expect(values.allowedDomains).toEqual(['registry.npmjs.org', '*.github.com']);
    expect(sources.allowedDomains).toBe(`project:${projectFile}`);
    expect(warnings).toEqual([
      `"network.allowedDomains": ["registry.npmjs.org","*.github.com"] comes from ${projectFile}, which loosens bhrain's confinement; this project is approved (--trust-project)`,
    ]);
    const unapproved = await resolveSkillSettings({ cwd: repo }, { env });
    expect(unapproved.values.allowedDomains).toEqual(['user.example']);
    expect(unapproved.warnings[0]).toMatch(
      /^ignored "network\.allowedDomains": \["registry\.npmjs\.org","\*\.github\.com"\] from .+; network\.allowedDomains is \["user\.example"\] \(user:/,
    );
  });

  it('given --allow-domain, repeated, then it beats the files whole, as any flag does', async () => {
    const { repo, env } = await given({ user: { network: { allowedDomains: ['user.example'] } } });
    const command = genSkillCommand('act', async () => 0);
    await command.parseAsync(['--atom', 'qwen', '--allow-domain', 'a.example', '--allow-domain', '*.b.example', 'hi'], { from: 'user' });
    const flags = pickExplicitFlags(command);
    expect(flags).toEqual({ atom: 'qwen', allowedDomains: ['a.example', '*.b.example'] });
    const { values, sources } = await resolveSkillSettings({ cwd: repo, flags }, { env });
    expect([values.allowedDomains, sources.allowedDomains]).toEqual([['a.example', '*.b.example'], 'flag']);
  });

  it('given a bad pattern, in a flag or a file, then exit 2 naming the flag, or the file and the key path, and what is valid', async () => {
    const { repo, env, projectFile, write } = await given();
    await expect(
      resolveSkillSettings({ cwd: repo, flags: { allowedDomains: ['ok.example', 'https://x.example'] } }, { env }),
    ).rejects.toThrow(
      /^--allow-domain "https:\/\/x\.example" is not a domain pattern: give the host alone, without the scheme; give a host name \(api\.example\.com\) or \*\. before a domain/,
    );
    await write(projectFile, { network: { allowedDomains: ['ok.example', 'x.example:443'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      new RegExp(
        `^bad value for 'network\\.allowedDomains\\[1\\]' in ${projectFile}: "x\\.example:443" is not a domain pattern: give the host alone, without a port`,
      ),
    );
    await write(projectFile, { network: { allowedDomain: ['ok.example'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `unknown key 'network.allowedDomain' in ${projectFile}: did you mean 'allowedDomains'? valid keys are allowedDomains`,
    );
    await write(projectFile, { network: { allowedDomains: 'ok.example' } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'network.allowedDomains' in ${projectFile}: expected a list of domain patterns, e.g. ["registry.npmjs.org", "*.github.com"]`,
    );
  });

  it('given allowed domains where they narrow nothing (the sandbox off, allowNetwork), then a warning says so; ask has none', async () => {
    const { repo, env, userFile } = await given({ user: { network: { allowedDomains: ['a.example'] }, sandbox: 'off' } });
    expect((await resolveSkillSettings({ cwd: repo }, { env })).warnings).toEqual([
      `network.allowedDomains (${userFile}) has no effect with the sandbox off: bash runs unconfined and reaches every host`,
    ]);
    expect(
      (
        await resolveSkillSettings(
          { cwd: repo, flags: { sandbox: 'workspace-write', allowNetwork: true, allowedDomains: ['b.example'] } },
          { env },
        )
      ).warnings,
    ).toEqual(['--allow-domain has no effect with allowNetwork (--allow-network): bash reaches every host']);
    const ask = await resolveSkillSettings({ skill: 'ask', cwd: repo }, { env });
    expect([ask.values.allowedDomains, ask.sources.allowedDomains, ask.warnings]).toEqual([[], 'default', []]);
  });
});

describe('sandbox.allowUnixSockets: the host sockets bash may reach, from the user file or an approved project', () => {
  it('given the user file, then it applies; given a project file that adds a socket, then only once the project is approved', async () => {
    const { repo, env, userFile, projectFile } = await given({
      user: { sandbox: { allowUnixSockets: ['/var/run/docker.sock'] } },
      project: { sandbox: { allowUnixSockets: ['/var/run/docker.sock', '~/.ssh-agent.sock'] } },
    });
    const unapproved = await resolveSkillSettings({ cwd: repo }, { env });
    expect([unapproved.values.allowUnixSockets, unapproved.sources.allowUnixSockets]).toEqual([
      ['/var/run/docker.sock'],
      `user:${userFile}`,
    ]);
    expect(unapproved.warnings[0]).toMatch(
      /^ignored "sandbox\.allowUnixSockets": \["\/var\/run\/docker\.sock","~\/\.ssh-agent\.sock"\] from .+: a project file may tighten bhrain's confinement, not loosen it without your approval; sandbox\.allowUnixSockets is \["\/var\/run\/docker\.sock"\] \(user:/,
    );
    const approved = await resolveSkillSettings({ cwd: repo, trustProject: true }, { env });
    expect([approved.values.allowUnixSockets, approved.sources.allowUnixSockets]).toEqual([
      ['/var/run/docker.sock', '~/.ssh-agent.sock'],
      `project:${projectFile}`,
    ]);
    const ask = await resolveSkillSettings({ skill: 'ask', cwd: repo, trustProject: true }, { env });
    expect(ask.values.allowUnixSockets).toEqual([]);
  });

  it('given allowNetwork beside it, then exit 2 saying why; given the sandbox off, then a warning that it does nothing', async () => {
    const { repo, env, userFile } = await given({ user: { sandbox: { allowUnixSockets: ['/var/run/docker.sock'] }, allowNetwork: true } });
    const refused = resolveSkillSettings({ cwd: repo }, { env });
    await expect(refused).rejects.toThrow(BadRequestError);
    await expect(refused).rejects.toThrow(
      `sandbox.allowUnixSockets (${userFile}) cannot go with allowNetwork (allowNetwork (${userFile})): with the host's network, bash would also reach every abstract unix socket of the host`,
    );
    const off = await resolveSkillSettings({ cwd: repo, flags: { sandbox: 'off' } }, { env });
    expect(off.warnings).toContain(
      `sandbox.allowUnixSockets (${userFile}) has no effect with the sandbox off: bash runs unconfined and reaches every socket`,
    );
  });

  it('given a relative path or a non-list, then an error naming the key path and what is valid', async () => {
    const { repo, env, projectFile, write } = await given();
    await write(projectFile, { sandbox: { allowUnixSockets: ['docker.sock'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.allowUnixSockets[0]' in ${projectFile}: "docker.sock" is not a socket's path: give one that starts with / or ~/, e.g. "/var/run/docker.sock"`,
    );
    await write(projectFile, { sandbox: { allowUnixSockets: '/var/run/docker.sock' } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.allowUnixSockets' in ${projectFile}: expected a list of unix sockets' paths, each absolute or starting with ~/, e.g. ["/var/run/docker.sock"]`,
    );
  });
});

describe('settings: sandbox.denyRead extends the paths hidden from the model', () => {
  it("denyRead: sandbox is a mode or { mode, denyRead }; denyRead is every layer's paths together, with each source", async () => {
    const { repo, sub, env, userFile, projectFile, subFile } = await given({
      user: { sandbox: { denyRead: ['/srv/secrets', '~/.config/op'] } },
      project: { sandbox: { mode: 'read-only', denyRead: ['~/.config/op', '~/.vault-token'] } },
      sub: { sandbox: 'workspace-write' },
    });
    const atRoot = await resolveSkillSettings({ cwd: repo }, { env });
    expect([atRoot.values.sandbox, atRoot.sources.sandbox]).toEqual(['read-only', `project:${projectFile}`]);
    expect(atRoot.values.denyRead).toEqual(['~/.config/op', '~/.vault-token', '/srv/secrets']);
    expect(atRoot.sources.denyRead).toBe(`project:${projectFile}, user:${userFile}`);
    // the string form of a nearer file sets the mode, and takes no path away
    const inSub = await resolveSkillSettings({ cwd: sub }, { env });
    expect([inSub.values.sandbox, inSub.sources.sandbox]).toEqual(['workspace-write', `project:${subFile}`]);
    expect(inSub.values.denyRead).toEqual(['~/.config/op', '~/.vault-token', '/srv/secrets']);
    // ask's sandbox is read-only whatever the files say, and hides the same paths
    expect((await resolveSkillSettings({ skill: 'ask', cwd: repo }, { env })).values).toMatchObject({
      sandbox: 'read-only',
      denyRead: ['~/.config/op', '~/.vault-token', '/srv/secrets'],
    });
  });

  it('denyRead: a relative path, / itself, and an unknown key of sandbox are errors naming the key path', async () => {
    const { repo, env, projectFile, write } = await given();
    await write(projectFile, { sandbox: { denyRead: ['.env', '/'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.denyRead[0]' in ${projectFile}: ".env" is not a path to hide: give one that starts with / or ~/ (and is not / itself), e.g. "~/.config/op"; bad value for 'sandbox.denyRead[1]' in ${projectFile}: "/" is not a path to hide`,
    );
    await write(projectFile, { sandbox: { mode: 'off', denyread: ['~/.x'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `unknown key 'sandbox.denyread' in ${projectFile}: did you mean 'denyRead'? valid keys are mode, denyRead, allowUnixSockets, env`,
    );
    await write(projectFile, { sandbox: { mode: 'of' } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.mode' in ${projectFile}: expected one of read-only, workspace-write, off, got "of"`,
    );
  });
});

describe('credentials masked: --mask-env and sandbox.env.mask', () => {
  it('given --mask-env, repeated (a name twice gets both host lists), then it beats the files whole, as any flag does', async () => {
    const { repo, env } = await given({ user: { sandbox: { env: { mask: { NPM_TOKEN: ['registry.npmjs.org'] } } } } });
    const command = genSkillCommand('act', async () => 0);
    await command.parseAsync(
      ['--atom', 'qwen', '--mask-env', 'GH_TOKEN=api.github.com,github.com', '--mask-env', 'GH_TOKEN=uploads.github.com', 'hi'],
      { from: 'user' },
    );
    const flags = pickExplicitFlags(command);
    expect(flags).toEqual({ atom: 'qwen', maskEnv: ['GH_TOKEN=api.github.com,github.com', 'GH_TOKEN=uploads.github.com'] });
    const { values, sources } = await resolveSkillSettings({ cwd: repo, flags }, { env });
    expect([values.maskEnv, sources.maskEnv]).toEqual([{ GH_TOKEN: ['api.github.com', 'github.com', 'uploads.github.com'] }, 'flag']);
    const fromFile = await resolveSkillSettings({ cwd: repo }, { env });
    expect(fromFile.values.maskEnv).toEqual({ NPM_TOKEN: ['registry.npmjs.org'] });
  });

  it('given a bad entry, in a flag or a file, then exit 2 naming the flag, or the file and the key path, and what is valid', async () => {
    const { repo, env, projectFile, write } = await given();
    const flagged = (maskEnv: string[]) => resolveSkillSettings({ cwd: repo, flags: { maskEnv } }, { env });
    await expect(flagged(['GH_TOKEN'])).rejects.toThrow(
      '--mask-env "GH_TOKEN" is not NAME=hosts: give the variable and the hosts its value may go to, e.g. GH_TOKEN=api.github.com,github.com',
    );
    await expect(flagged(['GH_TOKEN='])).rejects.toThrow('--mask-env GH_TOKEN is masked for no host');
    await expect(flagged(['GH_TOKEN=https://github.com'])).rejects.toThrow(
      '--mask-env GH_TOKEN: "https://github.com" is not a domain pattern: give the host alone, without the scheme',
    );
    await expect(flagged(['HTTPS_PROXY=x.com'])).rejects.toThrow(
      '--mask-env HTTPS_PROXY cannot be masked: bhrain sets it inside the sandbox',
    );
    await write(projectFile, { sandbox: { env: { mask: { 'GH TOKEN': ['github.com'] } } } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.env.mask' in ${projectFile}: "GH TOKEN" is not a variable to mask`,
    );
    await write(projectFile, { sandbox: { env: { mask: { GH_TOKEN: 'github.com' } } } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.env.mask.GH_TOKEN' in ${projectFile}: expected a list of domain patterns, e.g. ["api.github.com", "github.com"]`,
    );
    await write(projectFile, { sandbox: { env: { masks: {} } } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `unknown key 'sandbox.env.masks' in ${projectFile}: did you mean 'mask'? valid keys are pass, mask`,
    );
  });

  it('given a project file that masks a credential for a host the user did not, then it is ignored unless the project is approved', async () => {
    const { repo, env, projectFile } = await given({
      user: { sandbox: { env: { mask: { GH_TOKEN: ['github.com'] } } } },
      project: { sandbox: { env: { mask: { GH_TOKEN: ['github.com', 'evil.example'] } } } },
    });
    const unapproved = await resolveSkillSettings({ cwd: repo }, { env });
    expect(unapproved.values.maskEnv).toEqual({ GH_TOKEN: ['github.com'] });
    expect(unapproved.warnings).toContainEqual(
      expect.stringMatching(
        /^ignored "sandbox\.env\.mask": \{"GH_TOKEN":\["github\.com","evil\.example"\]\} from .+: a project file may tighten bhrain's confinement, not loosen it without your approval; sandbox\.env\.mask is \{"GH_TOKEN":\["github\.com"\]\} \(user:/,
      ),
    );
    const approved = await resolveSkillSettings({ cwd: repo, trustProject: true }, { env });
    expect([approved.values.maskEnv, approved.sources.maskEnv]).toEqual([
      { GH_TOKEN: ['github.com', 'evil.example'] },
      `project:${projectFile}`,
    ]);
    // fewer hosts, or fewer variables, loosen nothing
    const { repo: tighter, env: tighterEnv } = await given({
      user: { sandbox: { env: { mask: { GH_TOKEN: ['github.com', 'api.github.com'], NPM_TOKEN: ['registry.npmjs.org'] } } } },
      project: { sandbox: { env: { mask: { GH_TOKEN: ['GitHub.com'] } } } },
    });
    const narrowed = await resolveSkillSettings({ cwd: tighter }, { env: tighterEnv });
    expect([narrowed.values.maskEnv, narrowed.warnings]).toEqual([{ GH_TOKEN: ['GitHub.com'] }, []]);
  });

  it('given masked variables in ask, then none: ask has no network to write a value into', async () => {
    const { repo, env } = await given({ user: { sandbox: { env: { mask: { GH_TOKEN: ['github.com'] } } } } });
    const ask = await resolveSkillSettings({ skill: 'ask', cwd: repo }, { env });
    expect([ask.values.maskEnv, ask.sources.maskEnv]).toEqual([{}, 'default']);
  });
});

describe("the commands' environment: --pass-env and sandbox.env.pass", () => {
  it('given sandbox.env.pass in the user file, then it applies, beside the sandbox mode and denyRead of the same object', async () => {
    const { repo, env, userFile } = await given({
      user: { sandbox: { mode: 'read-only', denyRead: ['~/.op'], env: { pass: ['NPM_TOKEN'] } } },
    });
    const { values, sources } = await resolveSkillSettings({ cwd: repo }, { env });
    expect([values.passEnv, values.sandbox, sources.passEnv]).toEqual([['NPM_TOKEN'], 'read-only', `user:${userFile}`]);
  });

  it('given --pass-env, repeated, then it beats the files whole, as any flag does', async () => {
    const { repo, env } = await given({ user: { sandbox: { env: { pass: ['NPM_TOKEN'] } } } });
    const command = genSkillCommand('act', async () => 0);
    await command.parseAsync(['--atom', 'qwen', '--pass-env', 'GH_TOKEN', '--pass-env', 'AWS_PROFILE', 'hi'], { from: 'user' });
    const flags = pickExplicitFlags(command);
    expect(flags).toEqual({ atom: 'qwen', passEnv: ['GH_TOKEN', 'AWS_PROFILE'] });
    const { values, sources } = await resolveSkillSettings({ cwd: repo, flags }, { env });
    expect([values.passEnv, sources.passEnv]).toEqual([['GH_TOKEN', 'AWS_PROFILE'], 'flag']);
  });

  it("given a project file that passes a variable the user's settings do not, then it is ignored unless the project is approved, in act and in ask", async () => {
    const { repo, env, projectFile, userFile } = await given({
      user: { sandbox: { env: { pass: ['NPM_TOKEN'] } } },
      project: { sandbox: { env: { pass: ['NPM_TOKEN', 'AWS_SECRET_ACCESS_KEY'] } } },
    });
    for (const skill of ['act', 'ask'] as const) {
      const unapproved = await resolveSkillSettings({ skill, cwd: repo }, { env });
      expect([unapproved.values.passEnv, unapproved.sources.passEnv]).toEqual([['NPM_TOKEN'], `user:${userFile}`]);
      expect(unapproved.warnings).toEqual([
        `ignored "sandbox.env.pass": ["NPM_TOKEN","AWS_SECRET_ACCESS_KEY"] from ${projectFile}: a project file may tighten bhrain's confinement, not loosen it without your approval; sandbox.env.pass is ["NPM_TOKEN"] (user:${userFile}). To use it, approve this project with --trust-project, or add "${repo}" to "trustedProjects" in ${userFile}`,
      ]);
    }
    const approved = await resolveSkillSettings({ cwd: repo, trustProject: true }, { env });
    expect(approved.values.passEnv).toEqual(['NPM_TOKEN', 'AWS_SECRET_ACCESS_KEY']);
    expect(approved.warnings).toEqual([
      `"sandbox.env.pass": ["NPM_TOKEN","AWS_SECRET_ACCESS_KEY"] comes from ${projectFile}, which loosens bhrain's confinement; this project is approved (--trust-project)`,
    ]);
  });

  it('given a project file that narrows the list, then it applies without approval', async () => {
    const { repo, env, projectFile } = await given({
      user: { sandbox: { env: { pass: ['NPM_TOKEN', 'GH_TOKEN'] } } },
      project: { sandbox: { env: { pass: ['GH_TOKEN'] } } },
    });
    const { values, sources, warnings } = await resolveSkillSettings({ cwd: repo }, { env });
    expect([values.passEnv, sources.passEnv, warnings]).toEqual([['GH_TOKEN'], `project:${projectFile}`, []]);
  });

  it('given a name that is not one, in a flag or a file, or a misspelt key, then exit 2 naming it, the file and the key path', async () => {
    const { repo, env, projectFile, write } = await given();
    await expect(resolveSkillSettings({ cwd: repo, flags: { passEnv: ['AWS_*'] } }, { env })).rejects.toThrow(
      `--pass-env "AWS_*" is not a variable name: give one variable's exact name, e.g. NPM_TOKEN (no wildcard, no =value)`,
    );
    await write(projectFile, { sandbox: { env: { pass: ['OK', 'NPM_TOKEN=x'] } } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.env.pass[1]' in ${projectFile}: "NPM_TOKEN=x" is not a variable name: give one variable's exact name, e.g. NPM_TOKEN (no wildcard, no =value)`,
    );
    await write(projectFile, { sandbox: { env: { pas: ['NPM_TOKEN'] } } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `unknown key 'sandbox.env.pas' in ${projectFile}: did you mean 'pass'? valid keys are pass, mask`,
    );
    await write(projectFile, { sandbox: { env: ['NPM_TOKEN'] } });
    await expect(resolveSkillSettings({ cwd: repo }, { env })).rejects.toThrow(
      `bad value for 'sandbox.env' in ${projectFile}: expected an object with the keys pass, mask, got ["NPM_TOKEN"]`,
    );
  });
});

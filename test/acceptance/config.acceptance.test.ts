// `bhrain config` through the built CLI: the resolved settings and the source of each, for the working directory
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

/** .what = a real git repository with a subdirectory, a user settings dir of its own, and an env that points at them */
const given = async (files: { user?: unknown; project?: unknown } = {}) => {
  const root = tempDir('bhrain-config-');
  const repo = join(root, 'repo');
  const sub = join(repo, 'src');
  await mkdir(sub, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  const configDir = join(root, 'config');
  const userFile = join(configDir, 'settings.json');
  const projectFile = join(repo, '.bhrain', 'settings.json');
  const write = async (path: string, content: unknown) => {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  };
  if (files.user !== undefined) await write(userFile, files.user);
  if (files.project !== undefined) await write(projectFile, files.project);
  const env = { PATH: process.env.PATH, HOME: root, BHRAIN_CONFIG_DIR: configDir, BHRAIN_HOME: join(root, 'state') };
  return { root, repo, sub, env, userFile, projectFile };
};

describe('bhrain config (settings)', () => {
  it('bhrain config: prints each resolved setting with its source, as a table', async () => {
    const { sub, env, userFile, projectFile } = await given({
      user: { atom: 'claude/haiku', maxIterations: 12 },
      project: { atom: 'qwen', maxWallTime: '10m' },
    });
    const run = await runBhrain({ args: ['config', '--max-iterations', '3'], cwd: sub, env: { ...env, BHRAIN_MODEL: 'qwen3-coder-plus' } });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`settings of \`bhrain act\` in ${sub} (precedence: flag > env > project > user > default)`);
    const row = (key: string) => lines.find((line) => line.startsWith(`${key} `))?.split(/\s{2,}/);
    expect(row('atom')).toEqual(['atom', 'qwen', `project:${projectFile}`]);
    expect(row('model')).toEqual(['model', 'qwen3-coder-plus', 'env:BHRAIN_MODEL']);
    expect(row('maxIterations')).toEqual(['maxIterations', '3', 'flag']);
    expect(row('maxWallTime')).toEqual(['maxWallTime', '10m', `project:${projectFile}`]);
    expect(row('memory')).toEqual(['memory', 'summarize-on-limit', 'default']);
    expect(row('sandbox')).toEqual(['sandbox', 'workspace-write', 'default']);
    expect(run.stdout).toContain(`\n  user     ${userFile}\n`);
    expect(run.stdout).toContain(`\n  project  ${projectFile}\n  project  ${join(sub, '.bhrain', 'settings.json')}  (not found)\n`);
  });

  it('bhrain config: -o json prints one object with schemaVersion, each setting as {value, source}', async () => {
    const rules = { allow: ['bash(npm test*)'], deny: ['bash(rm *)'] };
    const { repo, env, userFile, projectFile } = await given({
      user: { baseUrl: { qwen: 'http://127.0.0.1:8000/v1' } },
      project: { atom: 'qwen', permission: rules },
    });
    const run = await runBhrain({ args: ['config', '-o', 'json'], cwd: repo, env });
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json).toMatchObject({ schemaVersion: 1, skill: 'act', cwd: repo, warnings: [] });
    expect(json.settings).toMatchObject({
      atom: { value: 'qwen', source: `project:${projectFile}` },
      baseUrl: { value: 'http://127.0.0.1:8000/v1', source: `user:${userFile}` },
      permission: { value: rules, source: `project:${projectFile}` },
      maxIterations: { value: 50, source: 'default' },
      maxBudgetUsd: { value: null, source: 'default' },
    });
    expect(json.files).toEqual([
      { layer: 'user', path: userFile, found: true },
      { layer: 'project', path: projectFile, found: true },
    ]);
    // a flag given to config shows its effect; --for ask shows ask's fixed read-only settings
    const flagged = JSON.parse(
      (await runBhrain({ args: ['config', '-o', 'json', '-a', 'claude/sonnet', '--for', 'ask'], cwd: repo, env })).stdout,
    );
    expect(flagged.settings).toMatchObject({
      atom: { value: 'claude/sonnet', source: 'flag' },
      permission: { value: 'readOnly' },
      sandbox: { value: 'read-only' },
    });
  });

  it('bhrain config: sandbox as { mode, denyRead } shows as sandbox and sandbox.denyRead, the paths of every file with their sources', async () => {
    const { repo, env, userFile, projectFile } = await given({
      user: { sandbox: { denyRead: ['/srv/secrets'] } },
      project: { sandbox: { mode: 'read-only', denyRead: ['~/.config/op'] } },
    });
    const table = await runBhrain({ args: ['config'], cwd: repo, env });
    expect(table.code, table.stderr).toBe(0);
    const row = (key: string) =>
      table.stdout
        .split('\n')
        .find((line) => line.startsWith(`${key} `))
        ?.split(/\s{2,}/);
    expect(row('sandbox')).toEqual(['sandbox', 'read-only', `project:${projectFile}`]);
    expect(row('sandbox.denyRead')).toEqual([
      'sandbox.denyRead',
      '["~/.config/op","/srv/secrets"]',
      `project:${projectFile}, user:${userFile}`,
    ]);
    const json = JSON.parse((await runBhrain({ args: ['config', '-o', 'json'], cwd: repo, env })).stdout);
    expect(json.settings['sandbox.denyRead']).toEqual({
      value: ['~/.config/op', '/srv/secrets'],
      source: `project:${projectFile}, user:${userFile}`,
    });
    // none added: the default names what is hidden anyway
    const none = await given();
    const plain = await runBhrain({ args: ['config'], cwd: none.repo, env: none.env });
    expect(plain.stdout).toMatch(
      /^sandbox\.denyRead\s+\(none added; the credential stores and \$BHRAIN_HOME are always hidden\)\s+default$/m,
    );
  });

  it('bhrain config: a bad settings key is exit 2, naming the file and the key', async () => {
    const { repo, env, projectFile } = await given({ project: { atomm: 'qwen' } });
    const run = await runBhrain({ args: ['config'], cwd: repo, env });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `bhrain config: unknown key 'atomm' in ${projectFile}: did you mean 'atom'? valid keys are atom, model, baseUrl, permission, allowedTools, disallowedTools, additionalDirectories, checkpoints, checkpointIgnoredMaxBytes, sandbox, allowNetwork, network, maxIterations, memory, timeoutMs, maxBudgetUsd, maxTokens, maxWallTime, projectInstructions, skills, systemPrompt, appendSystemPrompt, store, mcpServers, hooks, enableAllProjectMcpServers, enabledMcpjsonServers, trustedProjects\n`,
    );
    const json = await runBhrain({ args: ['config', '-o', 'json'], cwd: repo, env });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      exitCode: 2,
      error: { code: 'BAD_REQUEST', message: expect.stringContaining(`unknown key 'atomm' in ${projectFile}`) },
    });
  });

  it('bhrain config: a bad value and invalid JSON are exit 2, naming the file, the key or the position', async () => {
    const { repo, env, userFile } = await given({ user: { memory: 'forget' } });
    const bad = await runBhrain({ args: ['config'], cwd: repo, env });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      `bhrain config: bad value for 'memory' in ${userFile}: expected one of summarize-on-limit, truncate, got "forget"\n`,
    ]);
    await writeFile(userFile, '{ "atom": "qwen" ');
    const broken = await runBhrain({ args: ['config'], cwd: repo, env });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(new RegExp(`^bhrain config: invalid JSON in ${userFile} at line 1, column 18: `));
  });

  it('bhrain config: network.allowedDomains shows with its source, from a file or from --allow-domain; a bad pattern is exit 2', async () => {
    const { repo, env, projectFile } = await given({ project: { network: { allowedDomains: ['registry.npmjs.org', '*.github.com'] } } });
    // a project's hosts loosen the network: they apply once the project is approved
    const table = await runBhrain({ args: ['config', '--trust-project'], cwd: repo, env });
    expect(table.code).toBe(0);
    const row = table.stdout
      .split('\n')
      .find((line) => line.startsWith('network.allowedDomains '))
      ?.split(/\s{2,}/);
    expect(row).toEqual(['network.allowedDomains', 'registry.npmjs.org, *.github.com', `project:${projectFile}`]);
    const unapproved = await runBhrain({ args: ['config'], cwd: repo, env });
    expect(unapproved.stderr).toMatch(/^bhrain config: warning: ignored "network\.allowedDomains": /);
    const flagged = JSON.parse(
      (await runBhrain({ args: ['config', '-o', 'json', '--allow-domain', 'a.example', '--allow-domain', '*.b.example'], cwd: repo, env }))
        .stdout,
    );
    expect(flagged.settings['network.allowedDomains']).toEqual({ value: ['a.example', '*.b.example'], source: 'flag' });
    const none = JSON.parse((await runBhrain({ args: ['config', '-o', 'json', '--for', 'ask'], cwd: repo, env })).stdout);
    expect(none.settings['network.allowedDomains']).toEqual({ value: [], source: 'default' });
    const bad = await runBhrain({ args: ['config', '--allow-domain', 'example.com/path'], cwd: repo, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /^bhrain config: --allow-domain "example\.com\/path" is not a domain pattern: give the host alone, without a path; give a host name/,
    );
  });
});

// where a run's MCP servers come from (flags, .mcp.json, settings), which win, which need approval, and how
// their ${VAR}s expand; against real files in temp directories
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { BadRequestError } from '../../core/contract/errors.js';
import { readSettingsFile } from '../settings/readSettingsFile.js';
import { readMcpTimeoutMs } from './startMcpServers.js';
import type { McpServerConfig } from '../../agent/toolboxes/mcp/genMcpToolBox.js';
import { checkMcpServers } from './checkMcpServers.js';
import { expandMcpServer, resolveMcpServers } from './resolveMcpServers.js';
import { tempDir } from '#test-helpers/fs.js';

let repo: string;
let sub: string;
beforeEach(async () => {
  repo = tempDir('bhrain-mcp-config-');
  sub = join(repo, 'packages', 'app');
  await mkdir(sub, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
});
const writeJson = async (path: string, value: unknown) => {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(value));
};
const server = (tag: string) => ({ type: 'stdio' as const, command: 'node', args: [tag] });
const base = {
  configFiles: [] as string[],
  strict: false,
  settings: [],
  approval: { trusted: false, enableAllProjectMcpServers: false, enabledMcpjsonServers: [] },
  userSettingsPath: '/u/settings.json',
};
const env = {};

describe('CLI config: sources and precedence', () => {
  it("CLI config: user < project settings < the repository root's .mcp.json < --mcp-config files, in order; a later source's server of the same name wins", async () => {
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { a: server('mcp.json'), b: server('mcp.json') } });
    await writeJson(join(repo, 'one.json'), { mcpServers: { b: server('flag one'), c: server('flag one') } });
    await writeJson(join(repo, 'two.json'), { mcpServers: { c: server('flag two') } });
    const resolved = await resolveMcpServers(
      {
        ...base,
        cwd: sub,
        configFiles: ['../../one.json', '../../two.json'],
        settings: [
          { layer: 'user', path: '/u/settings.json', servers: { a: server('user'), u: server('user') } },
          { layer: 'project', path: join(repo, '.bhrain', 'settings.json'), servers: { a: server('project'), p: server('project') } },
        ],
        approval: { trusted: false, enableAllProjectMcpServers: true, enabledMcpjsonServers: [] },
      },
      { env },
    );
    const byName = Object.fromEntries(
      resolved.servers.map((each) => [each.name, { arg: (each.transport as { args: string[] }).args[0], kind: each.source.kind }]),
    );
    expect(byName).toEqual({
      a: { arg: 'mcp.json', kind: 'mcp.json' },
      b: { arg: 'flag one', kind: 'flag' },
      c: { arg: 'flag two', kind: 'flag' },
      u: { arg: 'user', kind: 'user' },
      p: { arg: 'project', kind: 'project' },
    });
  });

  it("--strict-mcp-config: only the flag's files are read; .mcp.json and the settings files are not", async () => {
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { a: server('mcp.json') } });
    await writeJson(join(repo, 'one.json'), { mcpServers: { b: server('flag') } });
    const resolved = await resolveMcpServers(
      {
        ...base,
        cwd: repo,
        strict: true,
        configFiles: ['one.json'],
        settings: [{ layer: 'user', path: '/u', servers: { u: server('user') } }],
      },
      { env },
    );
    expect(resolved.servers.map((each) => each.name)).toEqual(['b']);
  });

  it('security: project servers (.mcp.json, project settings) start only when the user settings approve them by name or all; user servers and flag files need no approval', async () => {
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { named: server('x'), other: server('x') } });
    const settings: Array<{ layer: 'user' | 'project'; path: string; servers: Record<string, McpServerConfig> }> = [
      { layer: 'user', path: '/u', servers: { mine: server('user') } },
      { layer: 'project', path: join(repo, '.bhrain', 'settings.json'), servers: { proj: server('project') } },
    ];
    const none = await resolveMcpServers({ ...base, cwd: repo, settings }, { env });
    expect(none.servers.map((each) => each.name)).toEqual(['mine']);
    expect(none.skipped).toHaveLength(3);
    expect(none.skipped[0]).toMatch(
      /^MCP server 'proj' from .*\.bhrain\/settings\.json was not started: .* Add "enabledMcpjsonServers": \["proj"\]/,
    );
    const byName = await resolveMcpServers(
      { ...base, cwd: repo, settings, approval: { trusted: false, enableAllProjectMcpServers: false, enabledMcpjsonServers: ['named'] } },
      { env },
    );
    expect(byName.servers.map((each) => each.name).sort()).toEqual(['mine', 'named']);
    const all = await resolveMcpServers(
      { ...base, cwd: repo, settings, approval: { trusted: false, enableAllProjectMcpServers: true, enabledMcpjsonServers: [] } },
      { env },
    );
    expect(all.servers.map((each) => each.name).sort()).toEqual(['mine', 'named', 'other', 'proj']);
    // the same file passed with --mcp-config is approved by being passed
    const flagged = await resolveMcpServers({ ...base, cwd: repo, configFiles: ['.mcp.json'] }, { env });
    expect(flagged.servers.map((each) => each.name).sort()).toEqual(['named', 'other']);
    expect(flagged.skipped).toEqual([]);
  });

  it('CLI config: .mcp.json is read at the repository root, not in the working directory below it; outside a repository, in the working directory', async () => {
    await writeJson(join(sub, '.mcp.json'), { mcpServers: { below: server('x') } });
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { root: server('x') } });
    const approval = { trusted: false, enableAllProjectMcpServers: true, enabledMcpjsonServers: [] };
    expect((await resolveMcpServers({ ...base, cwd: sub, approval }, { env })).servers.map((each) => each.name)).toEqual(['root']);
    const outside = tempDir('bhrain-mcp-nogit-');
    await writeJson(join(outside, '.mcp.json'), { mcpServers: { here: server('x') } });
    expect((await resolveMcpServers({ ...base, cwd: outside, approval }, { env })).servers.map((each) => each.name)).toEqual(['here']);
  });
});

describe('CLI config: validation names the file and the key (exit 2)', () => {
  it('CLI config: a missing --mcp-config file, bad JSON, an unknown top-level key, and bad servers are BadRequestErrors naming the file', async () => {
    await expect(resolveMcpServers({ ...base, cwd: repo, configFiles: ['nope.json'] }, { env })).rejects.toThrow(
      /^--mcp-config nope\.json: cannot read the MCP config file \(ENOENT\)/,
    );
    await writeFile(join(repo, 'bad.json'), '{"mcpServers": ');
    await expect(resolveMcpServers({ ...base, cwd: repo, configFiles: ['bad.json'] }, { env })).rejects.toThrow(
      `invalid JSON in the MCP config file ${join(repo, 'bad.json')}`,
    );
    await writeJson(join(repo, 'typo.json'), { mcpServer: {} });
    await expect(resolveMcpServers({ ...base, cwd: repo, configFiles: ['typo.json'] }, { env })).rejects.toThrow(
      `unknown key 'mcpServer' in the MCP config file ${join(repo, 'typo.json')}: the only valid key is mcpServers`,
    );
    // a broken .mcp.json fails even when nothing in it would start: it is never half-used
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { x: { command: 'node', cmd: 'typo' } } });
    const error = await resolveMcpServers({ ...base, cwd: repo }, { env }).catch((caught) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe(
      `bad value for 'mcpServers.x.cmd' in ${join(repo, '.mcp.json')}: unknown key for a stdio server: valid keys are type, command, args, env`,
    );
  });

  it('CLI config: each server is checked for its shape: stdio keys, http keys, sse refused with the fix, names fit tool names', () => {
    const { servers, issues } = checkMcpServers({
      ok: { command: 'npx', args: ['-y', 'x'], env: { A: 'b' } },
      web: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } },
      nocommand: { args: [] },
      mixed: { type: 'http', url: 'https://x', command: 'node' },
      old: { type: 'sse', url: 'https://x' },
      'bad.name': { command: 'x' },
      badenv: { command: 'x', env: { A: 1 } },
    });
    expect(servers.ok).toEqual({ type: 'stdio', command: 'npx', args: ['-y', 'x'], env: { A: 'b' } });
    expect(servers.web).toEqual({ type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } });
    expect(issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['nocommand.command', 'expected the command that starts the server, e.g. "npx", got nothing'],
      ['mixed.command', 'unknown key for a http server: valid keys are type, url, headers'],
      [
        'old.type',
        'expected "stdio" or "http", got "sse" (the SSE transport is deprecated: use the server\'s streamable HTTP endpoint with "type": "http")',
      ],
      [
        'bad.name',
        'the server name may hold only letters, digits, _ and - (it is part of the tool names mcp__bad.name__<tool>): rename it',
      ],
      ['badenv.env', 'expected an object of string values, e.g. {"TOKEN": "${TOKEN}"}, got {"A":1}'],
    ]);
  });

  it('settings: mcpServers in a settings file is checked the same way, naming the file and the key path; approval keys are refused in a project file', async () => {
    const path = join(repo, '.bhrain', 'settings.json');
    await writeJson(path, { mcpServers: { gh: { command: 'x', args: 'y' } } });
    await expect(readSettingsFile({ path, layer: 'user' })).rejects.toThrow(
      `bad value for 'mcpServers.gh.args' in ${path}: expected a list of strings, got "y"`,
    );
    await writeJson(path, { enabledMcpjsonServers: ['gh'] });
    await expect(readSettingsFile({ path, layer: 'project' })).rejects.toThrow(
      `enabledMcpjsonServers is not allowed in a project settings file (${path})`,
    );
    expect(await readSettingsFile({ path, layer: 'user' })).toEqual({ enabledMcpjsonServers: ['gh'] });
    await writeJson(path, { enableAllProjectMcpServer: true });
    await expect(readSettingsFile({ path, layer: 'user' })).rejects.toThrow(
      `unknown key 'enableAllProjectMcpServer' in ${path}: did you mean 'enableAllProjectMcpServers'?`,
    );
  });
});

describe('CLI config: ${VAR} expansion, as Claude Code does', () => {
  it('CLI config: ${VAR} and ${VAR:-default} are expanded in command, args and env (stdio), url and headers (http)', () => {
    const vars = { BIN: '/opt/bin/server', TOKEN: 's3cret', EMPTY: '' };
    expect(
      expandMcpServer(
        {
          name: 's',
          from: 'f',
          server: { type: 'stdio', command: '${BIN}', args: ['--port=${PORT:-8080}', '${EMPTY:-unused}'], env: { T: 'Bearer ${TOKEN}' } },
        },
        { env: vars },
      ),
    ).toEqual({ type: 'stdio', command: '/opt/bin/server', args: ['--port=8080', ''], env: { T: 'Bearer s3cret' } });
    expect(
      expandMcpServer(
        {
          name: 'h',
          from: 'f',
          server: { type: 'http', url: 'https://${HOST:-mcp.example.com}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        },
        { env: vars },
      ),
    ).toEqual({ type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cret' } });
  });

  it('CLI config: an unset variable without a default is an error naming the server, its file and the variables', () => {
    expect(() =>
      expandMcpServer(
        { name: 'github', from: '/repo/.mcp.json', server: { type: 'stdio', command: 'x', env: { A: '${GITHUB_TOKEN}', B: '${OTHER}' } } },
        { env: {} },
      ),
    ).toThrow(
      "MCP server 'github' (/repo/.mcp.json) uses unset environment variables: GITHUB_TOKEN, OTHER. Set them, or give a default as ${NAME:-value}",
    );
  });

  it('lifecycle: MCP_TIMEOUT gives the start timeout in ms (default 30000); a bad value names the variable', () => {
    expect(readMcpTimeoutMs({})).toBe(30_000);
    expect(readMcpTimeoutMs({ MCP_TIMEOUT: '1500' })).toBe(1_500);
    expect(() => readMcpTimeoutMs({ MCP_TIMEOUT: '10s' })).toThrow(
      "MCP_TIMEOUT must be a whole number of milliseconds of at least 1 (the MCP servers' start timeout), got '10s'",
    );
  });
});

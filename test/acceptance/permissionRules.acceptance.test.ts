// permission rules that name nothing are errors: a rule whose tool is no tool of the run (`bsh(rm *)`), a rule naming
// an MCP server the run does not configure, and an unknown key of a rules file or of inline rules stop the built CLI
// with exit 2 before any model request, naming the rule or key, where it came from, and what was meant; a deny rule
// naming a tool a started MCP server does not list is a warning
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const EVERYTHING = join(PACKAGE_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const { standin } = useStandin();
let base: string;
let repo: string;
let userConfig: string;
beforeEach(async () => {
  base = tempDir('bhrain-rules-cli-');
  repo = join(base, 'repo');
  userConfig = join(base, 'user-config');
  await mkdir(repo, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
});
const writeJson = async (path: string, value: unknown): Promise<string> => {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(value));
  return path;
};
const act = (...args: string[]) =>
  runBhrain({
    args: ['act', '--atom', 'qwen', '--input', 'remove junk.txt', ...args],
    cwd: repo,
    env: genCliEnv({ standin: standin(), home: join(base, 'home') }, { BHRAIN_CONFIG_DIR: userConfig }),
  });

describe('a permission rule that names no tool stops the run before any request (exit 2)', () => {
  it("given --permission rules.json with deny `bsh(rm *)`, then exit 2 names the rule, its kind, the file, and 'did you mean bash'", async () => {
    await writeJson(join(repo, 'rules.json'), { allow: ['bash'], deny: ['bsh(rm *)'] });
    const run = await act('--permission', 'rules.json');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "permission rule 'bsh(rm *)' (deny, from --permission rules.json) names no tool: did you mean 'bash'? the tools are bash, edit, glob, grep, read, skill, task, websearch, write, and MCP tools as mcp__<server>__<tool>. A rule that names nothing judges nothing (a deny would deny nothing): fix or remove it",
    );
    expect(standin().requests).toHaveLength(0);
  });

  it('given the same rules inline in the user settings file, then exit 2 names the settings file', async () => {
    const file = await writeJson(join(userConfig, 'settings.json'), { permission: { allow: ['bash'], deny: ['bsh(rm *)'] } });
    const run = await act();
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`permission rule 'bsh(rm *)' (deny, from "permission" in ${file}) names no tool: did you mean 'bash'?`);
    expect(standin().requests).toHaveLength(0);
  });

  it("given a rules file or inline rules with the key `alow`, then exit 2 names the key and 'did you mean allow'", async () => {
    await writeJson(join(repo, 'rules.json'), { alow: ['bash'] });
    const fromFile = await act('--permission', 'rules.json');
    expect([fromFile.code, fromFile.stderr.trim()]).toEqual([
      2,
      `bhrain act: --permission rules.json: unknown key 'alow': did you mean 'allow'? (valid keys are allow, prompt, deny); expected {"allow": [...], "prompt": [...], "deny": [...]} with rule strings like "bash(npm test*)" or "write(src/**)"`,
    ]);
    const file = await writeJson(join(userConfig, 'settings.json'), { permission: { alow: ['bash'] } });
    const inline = await act();
    expect(inline.code).toBe(2);
    expect(inline.stderr).toContain(`unknown key 'permission.alow' in ${file}: did you mean 'allow'? valid keys are allow, prompt, deny`);
    expect(standin().requests).toHaveLength(0);
  });

  it('given a rule naming an MCP server the run does not configure, then exit 2 names it and the server it is nearest', async () => {
    const config = await writeJson(join(base, 'mcp.json'), {
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    });
    await writeJson(join(repo, 'rules.json'), { allow: ['bash', 'mcp__evrything__*'] });
    const run = await act('--permission', 'rules.json', '--mcp-config', config);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "permission rule 'mcp__evrything__*' (allow, from --permission rules.json) names the MCP server 'evrything', which this run does not configure: did you mean 'everything'? its MCP servers are everything.",
    );
    expect(standin().requests).toHaveLength(0);
  });
});

describe('a deny rule naming a tool its MCP server does not list is a warning once the server has started', () => {
  it("given deny `mcp__everything__ech` and server-everything, then the run goes on and warns, naming the rule and 'did you mean mcp__everything__echo'", async () => {
    const config = await writeJson(join(base, 'mcp.json'), {
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    });
    await writeJson(join(repo, 'rules.json'), { allow: ['read'], deny: ['mcp__everything__ech', 'mcp__everything__echo'] });
    standin().script({ text: 'nothing to do' });
    const run = await act('--permission', 'rules.json', '--mcp-config', config, '--mcp-required', '--output', 'json');
    expect(run.code, run.stderr).toBe(0);
    const warning = JSON.parse(run.stdout).warnings.find((each: string) => each.startsWith("deny rule 'mcp__everything__ech'"));
    expect(warning).toMatch(
      /^deny rule 'mcp__everything__ech' \(from --permission rules\.json\) matches no tool of MCP server 'everything', so it denies nothing: did you mean 'mcp__everything__echo'\? its tools are .*mcp__everything__echo/,
    );
    expect(run.stderr).toContain("warning: deny rule 'mcp__everything__ech'");
    // the rule that matches a tool is not warned about
    expect(run.stderr).not.toContain("deny rule 'mcp__everything__echo'");
    expect(existsSync(join(repo, 'rules.json'))).toBe(true);
  });
});

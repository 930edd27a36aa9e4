// the settings files take effect in `bhrain act` and `bhrain ask`, through the built CLI as a child process,
// in real temp git repositories, against the stand-in; precedence: flag > env > project > user > default
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let userConfig: string;
let repo: string;
let sub: string;

beforeEach(async () => {
  const base = tempDir('bhrain-settings-cli-');
  home = join(base, 'home');
  userConfig = join(base, 'user-config');
  repo = join(base, 'repo');
  sub = join(repo, 'packages', 'app');
  await mkdir(sub, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
});
// the user settings dir is the test's own, never the real ~/.config/bhrain
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home }, { BHRAIN_CONFIG_DIR: userConfig, ...overrides });
const projectFile = () => join(repo, '.bhrain', 'settings.json');
const userFile = () => join(userConfig, 'settings.json');
const write = async (path: string, settings: unknown) => {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(settings, null, 2));
};
const protocols = () => standin().requests.map((request: StandinRequest) => request.protocol);

describe('settings take effect: the atom', () => {
  it('settings take effect: .bhrain/settings.json with "atom": "qwen" makes `bhrain ask "hi"` work without --atom, over the openai protocol', async () => {
    await write(projectFile(), { atom: 'qwen' });
    standin().script({ text: 'hello from qwen' });
    const run = await runBhrain({ args: ['ask', 'hi'], cwd: sub, env: envFor() });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('hello from qwen\n');
    expect(protocols()).toEqual(['openai']);
  });

  it('settings take effect: the user file gives the atom when the project has none', async () => {
    await write(userFile(), { atom: 'claude/haiku' });
    standin().script({ text: 'hello from claude' });
    const run = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor() });
    expect(run.code).toBe(0);
    expect(protocols()).toEqual(['anthropic']);
  });

  it('settings take effect: project beats user, BHRAIN_ATOM beats project, --atom beats BHRAIN_ATOM', async () => {
    await write(userFile(), { atom: 'claude/haiku' });
    await write(projectFile(), { atom: 'qwen' });
    standin().script({ text: 'a' }, { text: 'b' }, { text: 'c' });
    expect((await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor() })).code).toBe(0);
    expect((await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor({ BHRAIN_ATOM: 'claude/sonnet' }) })).code).toBe(0);
    expect(
      (await runBhrain({ args: ['ask', '--atom', 'qwen/qwen-plus', 'hi'], cwd: repo, env: envFor({ BHRAIN_ATOM: 'claude/sonnet' }) })).code,
    ).toBe(0);
    expect(protocols()).toEqual(['openai', 'anthropic', 'openai']);
    expect(standin().requests[1].body.model).toBe('claude-sonnet-4-6');
    expect(standin().requests[2].body.model).toBe('qwen-plus');
  });

  it('without an atom anywhere, the supplier whose key is set is the atom, and the run says so on stderr', async () => {
    standin().script({ text: 'from qwen' }, { text: 'from claude' });
    const qwenOnly = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor({ ANTHROPIC_API_KEY: undefined }) });
    expect([qwenOnly.code, qwenOnly.stdout]).toEqual([0, 'from qwen\n']);
    expect(qwenOnly.stderr).toMatch(/atom: qwen \(QWEN_API_KEY is set; choose another with --atom\)/);
    // both set: the supplier table's order, claude first
    const both = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor() });
    expect([both.code, both.stdout]).toEqual([0, 'from claude\n']);
    expect(both.stderr).toMatch(/atom: claude \(ANTHROPIC_API_KEY is set/);
    expect(protocols()).toEqual(['openai', 'anthropic']);
  });

  it('settings take effect: no atom anywhere and no key is exit 2, saying where an atom can be set', async () => {
    const run = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor({ ANTHROPIC_API_KEY: undefined, QWEN_API_KEY: undefined }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no atom: no --atom, no "atom" setting, and no supplier key is set\. Set one of /);
    expect(run.stderr).toMatch(/BHRAIN_ATOM/);
    expect(run.stderr).toMatch(/settings\.json/);
  });
});

describe('settings take effect: the endpoint', () => {
  it('settings take effect: baseUrl.qwen in the user file is the endpoint when QWEN_BASE_URL is unset; QWEN_BASE_URL beats it', async () => {
    await write(userFile(), { atom: 'qwen', baseUrl: { qwen: standin().openaiUrl } });
    standin().script({ text: 'via the user file' }, { text: 'via the env' });
    const fromFile = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor({ QWEN_BASE_URL: undefined }) });
    expect([fromFile.code, fromFile.stdout]).toEqual([0, 'via the user file\n']);
    // a dead endpoint in the file, the stand-in in the env: the env wins, so the run reaches the stand-in
    await write(userFile(), { atom: 'qwen', baseUrl: { qwen: 'http://127.0.0.1:9/v1' } });
    const fromEnv = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor() });
    expect([fromEnv.code, fromEnv.stdout]).toEqual([0, 'via the env\n']);
  });
});

describe('settings take effect: limits, permission, instructions', () => {
  it('settings take effect: maxIterations from the project file stops the run (exit 3); --max-iterations overrides it', async () => {
    await write(projectFile(), { atom: 'qwen', maxIterations: 1 });
    standin().respond = () => ({ toolCalls: [{ name: 'glob', input: { pattern: `*.${Math.random().toString(36).slice(2)}` } }] });
    const capped = await runBhrain({ args: ['ask', 'loop'], cwd: repo, env: envFor() });
    expect(capped.code).toBe(3);
    expect(standin().requests).toHaveLength(1);
    standin().reset();
    standin().respond = () =>
      standin().requests.length < 2 ? { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] } : { text: 'done' };
    const flagged = await runBhrain({ args: ['ask', '--max-iterations', '5', 'loop'], cwd: repo, env: envFor() });
    expect([flagged.code, flagged.stdout]).toEqual([0, 'done\n']);
  });

  it('settings take effect: maxTokens from the user file is a budget (exit 6)', async () => {
    await write(userFile(), { atom: 'qwen', maxTokens: 5000 });
    standin().respond = () => ({ toolCalls: [{ name: 'glob', input: { pattern: `*.${Math.random().toString(36).slice(2)}` } }] });
    const run = await runBhrain({ args: ['ask', '-o', 'json', 'loop forever'], cwd: repo, env: envFor() });
    expect(run.code).toBe(6);
    expect(JSON.parse(run.stdout)).toMatchObject({ termination: 'budget', exitCode: 6 });
  });

  it('settings take effect: inline permission rules in the project file deny a write in act', async () => {
    await write(projectFile(), { atom: 'qwen', permission: { allow: ['read', 'glob'], deny: ['write(*.txt)'] } });
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'out.txt', content: 'x' } }] }, { text: 'could not write' });
    const run = await runBhrain({ args: ['act', '-o', 'json', 'write out.txt'], cwd: repo, env: envFor() });
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.toolCalls).toMatchObject({
      made: 1,
      denied: 1,
      denials: [{ tool: 'write', by: 'guard', reason: expect.stringContaining('write(*.txt)') }],
    });
    await expect(readFile(join(repo, 'out.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('settings take effect: "projectInstructions": false keeps AGENTS.md out of the system prompt', async () => {
    await writeFile(join(repo, 'AGENTS.md'), 'ROOT-RULE: run npm test\n');
    await write(projectFile(), { atom: 'qwen', projectInstructions: false });
    standin().script({ text: 'ok' });
    expect((await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor() })).code).toBe(0);
    expect(JSON.stringify(standin().requests[0].body)).not.toContain('ROOT-RULE');
  });

  it('approval: a project file that turns the sandbox off is ignored, said in the JSON too; approved, it applies, said too', async () => {
    await write(projectFile(), { atom: 'qwen', sandbox: 'off' });
    standin().script({ text: 'ok' }, { text: 'ok' });
    const run = await runBhrain({ args: ['act', '-o', 'json', 'hi'], cwd: repo, env: envFor() });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^ignored "sandbox": "off" from ${projectFile()}: .+ To use it, approve this project with --trust-project`),
      ),
    ]);
    const trusted = await runBhrain({ args: ['act', '--trust-project', '-o', 'json', 'hi'], cwd: repo, env: envFor() });
    expect(JSON.parse(trusted.stdout).warnings).toEqual([
      `"sandbox": "off" comes from ${projectFile()}, which loosens bhrain's confinement; this project is approved (--trust-project)`,
    ]);
  });
});

describe('settings take effect: a bad file stops the run', () => {
  it('settings take effect: a bad settings key is exit 2 naming the key, before any request; -o json is one object', async () => {
    await write(projectFile(), { atom: 'qwen', maxIteration: 3 });
    const run = await runBhrain({ args: ['ask', 'hi'], cwd: repo, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`unknown key 'maxIteration' in ${projectFile()}: did you mean 'maxIterations'?`);
    const json = await runBhrain({ args: ['act', '--atom', 'qwen', '-o', 'json', 'hi'], cwd: repo, env: envFor() });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      termination: 'usage',
      exitCode: 2,
      error: { message: expect.stringContaining("unknown key 'maxIteration'") },
    });
    expect(standin().requests).toHaveLength(0);
  });
});

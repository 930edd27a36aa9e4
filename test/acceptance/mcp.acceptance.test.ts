// MCP servers as toolboxes, end to end: `bhrain act --mcp-config f.json` through the built CLI as a child
// process, with real MCP servers from node_modules (server-everything, stdio) and the stand-in as the model
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const EVERYTHING = join(PACKAGE_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** .what = the pids of live processes whose environment holds MARKER=<marker>: what a run left behind, found with ps's source */
const findMarked = async (marker: string): Promise<number[]> => {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const environs = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')));
  return pids.filter((_, index) => environs[index].split('\0').includes(`BHRAIN_TEST_MCP_MARKER=${marker}`)).map(Number);
};

/** .what = waits until a condition holds (or the time is up), polling */
const waitFor = async (condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> => {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
};

const { standin } = useStandin();
let base: string;
let home: string;
let userConfig: string;
let repo: string;
beforeEach(async () => {
  base = tempDir('bhrain-mcp-cli-');
  home = join(base, 'home');
  userConfig = join(base, 'user-config');
  repo = join(base, 'repo');
  await mkdir(repo, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
});
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home }, { BHRAIN_CONFIG_DIR: userConfig, ...overrides });
const writeJson = async (path: string, value: unknown) => {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(value, null, 2));
};

/** .what = server-everything over stdio, marked in its environment so the process table shows whether it outlives the run */
const everything = (marker: string) => ({
  command: process.execPath,
  args: [EVERYTHING, 'stdio'],
  env: { BHRAIN_TEST_MCP_MARKER: marker },
});
/** .what = an MCP config file holding these servers, outside the repository */
const mcpConfig = async (servers: Record<string, unknown>, name = `mcp-${randomUUID()}.json`): Promise<string> => {
  const path = join(base, name);
  await writeJson(path, { mcpServers: servers });
  return path;
};
/** .what = the tool names the model was offered in a request (openai protocol: qwen) */
const offered = (request: StandinRequest): string[] =>
  ((request.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((tool) => tool.function.name);

describe('CLI: an MCP tool call through `bhrain act --mcp-config`', () => {
  it('a call whose result reaches the model: the stand-in calls mcp__everything__echo, sees "Echo: …" in its next request, and no server process is left', async () => {
    const marker = randomUUID();
    // ${VAR} is expanded from bhrain's environment, as Claude Code does: the marker reaches the server only that way
    const config = await mcpConfig({ everything: { ...everything('${TEST_MARKER}'), args: [EVERYTHING, '${TEST_TRANSPORT:-stdio}'] } });
    standin().script({ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'hello from the stand-in' } }] }, { text: 'echoed' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '--input', 'echo it'],
      cwd: repo,
      env: envFor({ TEST_MARKER: marker }),
    });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('echoed\n');
    const [first, second] = standin().requests;
    expect(offered(first)).toContain('mcp__everything__echo');
    expect(JSON.stringify(second.body)).toContain('Echo: hello from the stand-in');
    expect(await findMarked(marker)).toEqual([]);
  });

  it('the end-of-run audit counts each MCP tool called (mcp__server__tool), with its calls', async () => {
    const config = await mcpConfig({ everything: everything(randomUUID()) });
    standin().script(
      {
        toolCalls: [
          { name: 'mcp__everything__echo', input: { message: 'one' } },
          { name: 'mcp__everything__echo', input: { message: 'two' } },
        ],
      },
      { text: 'echoed' },
    );
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '-o', 'json', '--input', 'echo'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).audit.tools).toEqual([{ tool: 'mcp__everything__echo', calls: 2, failed: 0, denied: 0 }]);
  });

  it('limits: a huge MCP result goes through the same truncation and spill as built-in tools', async () => {
    const config = await mcpConfig({ everything: everything(randomUUID()) });
    // one line per entry, so the cut (at line boundaries) keeps both ends; 60 000 chars is twice the 30 000 cap
    const message = Array.from({ length: 3_000 }, (_, index) => `line ${String(index).padStart(5, '0')} ${'x'.repeat(8)}`).join('\n');
    standin().script({ toolCalls: [{ name: 'mcp__everything__echo', input: { message } }] }, { text: 'cut' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '-o', 'json', '--input', 'echo it'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout.trim().split('\n').pop()!).record as string;
    // the tool message, not the call (whose arguments hold the whole message)
    const toModel = (standin().requests[1].body as { messages: Array<{ role: string; content: string }> }).messages.find(
      (each) => each.role === 'tool',
    )!.content;
    expect(toModel).toContain('Echo: line 00000');
    expect(toModel).toContain('line 02999');
    expect(toModel).not.toContain('line 01500');
    expect(toModel.length).toBeLessThan(31_000);
    const spilled = (await readdir(join(record, 'spill')).catch(() => [] as string[])).filter((name) =>
      name.startsWith('mcp__everything__echo-'),
    );
    expect(spilled).toHaveLength(1);
    expect(await readFile(join(record, 'spill', spilled[0]), 'utf8')).toBe(`Echo: ${message}`);
  });

  it('permissions: a rule denying mcp__everything__* denies the call, and the model is told', async () => {
    const config = await mcpConfig({ everything: everything(randomUUID()) });
    const rules = join(base, 'rules.json');
    await writeJson(rules, { allow: ['read', 'mcp__*'], deny: ['mcp__everything__*'] });
    standin().script({ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'x' } }] }, { text: 'it was denied' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '--permission', rules, '-o', 'json', '--input', 'echo it'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(result.toolCalls).toMatchObject({
      denied: 1,
      denials: [{ tool: 'mcp__everything__echo', reason: 'denied by rule `mcp__everything__*` (mcp__everything__echo)' }],
    });
    const toModel = JSON.stringify(standin().requests[1].body);
    expect(toModel).toContain('permission denied: denied by rule `mcp__everything__*`');
    expect(toModel).not.toContain('Echo: x');
  });

  it('permissions: with an allow rule `mcp__everything__echo` the same call runs (the deny above is the rule, not the setup)', async () => {
    const config = await mcpConfig({ everything: everything(randomUUID()) });
    const rules = join(base, 'rules.json');
    await writeJson(rules, { allow: ['mcp__everything__echo'] });
    standin().script({ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'allowed' } }] }, { text: 'ran' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '--permission', rules, '--input', 'echo it'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(JSON.stringify(standin().requests[1].body)).toContain('Echo: allowed');
  });

  it('permissions: readOnly and ask start the servers and offer only the tools each marks read-only (readOnlyHint), which run; no server outlives the run', async () => {
    const marker = randomUUID();
    const config = await mcpConfig({ everything: everything(marker) });
    standin().script(
      { toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'from act' } }] },
      { text: 'a' },
      { toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'from ask' } }] },
      { text: 'b' },
    );
    const act = await runBhrain({
      args: ['act', '--atom', 'qwen', '--permission', 'readOnly', '--mcp-config', config, '--input', 'hi'],
      cwd: repo,
      env: envFor(),
    });
    const ask = await runBhrain({ args: ['ask', '--atom', 'qwen', '--mcp-config', config, '--input', 'hi'], cwd: repo, env: envFor() });
    expect([act.code, ask.code, act.stdout, ask.stdout]).toEqual([0, 0, 'a\n', 'b\n']);
    const mcpOffered = standin()
      .requests.map(offered)
      .map((names) => names.filter((name) => name.startsWith('mcp__')));
    for (const names of mcpOffered) {
      expect(names).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
      expect(names).not.toContain('mcp__everything__toggle-simulated-logging');
      expect(names).not.toContain('mcp__everything__gzip-file-as-resource');
    }
    // each echo ran: its result is in the request after it
    expect(JSON.stringify(standin().requests[1].body)).toContain('Echo: from act');
    expect(JSON.stringify(standin().requests[3].body)).toContain('Echo: from ask');
    expect(await findMarked(marker)).toEqual([]);
  });
});

describe('CLI: where servers come from', () => {
  it("--strict-mcp-config: only the flag's files; without it the repository's approved .mcp.json is read too", async () => {
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { project: everything(randomUUID()) } });
    await writeJson(join(userConfig, 'settings.json'), { enabledMcpjsonServers: ['project'] });
    const config = await mcpConfig({ everything: everything(randomUUID()) });
    standin().script({ text: 'strict' }, { text: 'not strict' });
    const strict = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '--strict-mcp-config', '--input', 'hi'],
      cwd: repo,
      env: envFor(),
    });
    const loose = await runBhrain({ args: ['act', '--atom', 'qwen', '--mcp-config', config, '--input', 'hi'], cwd: repo, env: envFor() });
    expect([strict.code, loose.code]).toEqual([0, 0]);
    const [strictTools, looseTools] = standin().requests.map(offered);
    expect(strictTools).toContain('mcp__everything__echo');
    expect(strictTools.filter((name) => name.startsWith('mcp__project__'))).toEqual([]);
    expect(looseTools).toContain('mcp__project__echo');
    expect(looseTools).toContain('mcp__everything__echo');
  });

  it('security: a project .mcp.json not approved in the user settings is skipped with a notice; approved, it starts', async () => {
    const marker = randomUUID();
    await writeJson(join(repo, '.mcp.json'), { mcpServers: { proj: everything(marker) } });
    standin().script({ text: 'skipped' }, { text: 'started' });
    const skipped = await runBhrain({ args: ['act', '--atom', 'qwen', '--input', 'hi'], cwd: repo, env: envFor() });
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain(
      `MCP server 'proj' from ${join(repo, '.mcp.json')} was not started: project servers run commands outside the sandbox, so they need your approval. Add "enabledMcpjsonServers": ["proj"] (or "enableAllProjectMcpServers": true) to ${join(userConfig, 'settings.json')}`,
    );
    // with --mcp-required, a server left unapproved stops the run as a failed one would
    const required = await runBhrain({ args: ['act', '--atom', 'qwen', '--mcp-required', '--input', 'hi'], cwd: repo, env: envFor() });
    expect(required.code).toBe(2);
    expect(required.stderr).toMatch(/--mcp-required: MCP server 'proj' from .* was not started/);
    await writeJson(join(userConfig, 'settings.json'), { enabledMcpjsonServers: ['proj'] });
    const approved = await runBhrain({ args: ['act', '--atom', 'qwen', '--input', 'hi'], cwd: repo, env: envFor() });
    expect(approved.code).toBe(0);
    expect(approved.stderr).not.toMatch(/not started/);
    const [before, after] = standin().requests.map(offered);
    expect(before.filter((name) => name.startsWith('mcp__'))).toEqual([]);
    expect(after).toContain('mcp__proj__echo');
    expect(await findMarked(marker)).toEqual([]);
  });

  it('security: a project settings file cannot approve its own servers (exit 2, naming the file and the key)', async () => {
    await writeJson(join(repo, '.bhrain', 'settings.json'), {
      enableAllProjectMcpServers: true,
      mcpServers: { proj: everything(randomUUID()) },
    });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--input', 'hi'], cwd: repo, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `enableAllProjectMcpServers is not allowed in a project settings file (${join(repo, '.bhrain', 'settings.json')})`,
    );
    expect(standin().requests).toHaveLength(0);
  });

  it('config: a bad --mcp-config file is exit 2 naming the file and the key, before any model request', async () => {
    const config = await mcpConfig({ everything: { command: 'node', args: 'not-a-list' }, other: { type: 'sse', url: 'http://x' } });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--mcp-config', config, '--input', 'hi'], cwd: repo, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`bad value for 'mcpServers.everything.args' in ${config}: expected a list of strings, got "not-a-list"`);
    expect(run.stderr).toContain(`bad value for 'mcpServers.other.type' in ${config}: expected "stdio" or "http", got "sse"`);
    expect(standin().requests).toHaveLength(0);
  });
});

describe('CLI: lifecycle', () => {
  it('a server that never starts (bad command): stderr names it, the run goes on with the others (exit 0); with --mcp-required, exit 2 before any model request', async () => {
    const config = await mcpConfig({ broken: { command: join(base, 'no-such-server') }, everything: everything(randomUUID()) });
    standin().script({ text: 'went on' });
    const goesOn = await runBhrain({ args: ['act', '--atom', 'qwen', '--mcp-config', config, '--input', 'hi'], cwd: repo, env: envFor() });
    expect(goesOn.code).toBe(0);
    expect(goesOn.stdout).toBe('went on\n');
    expect(goesOn.stderr).toMatch(/error: MCP server 'broken' did not start: .*no-such-server/);
    expect(offered(standin().requests[0])).toContain('mcp__everything__echo');

    const stops = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '--mcp-required', '--input', 'hi'],
      cwd: repo,
      env: envFor(),
    });
    expect(stops.code).toBe(2);
    expect(stops.stderr).toMatch(/--mcp-required: MCP server 'broken' did not start/);
    expect(standin().requests).toHaveLength(1);
  });

  it('a slow start past MCP_TIMEOUT fails that server by name, and its process is gone', async () => {
    const marker = randomUUID();
    const slow = join(base, 'slow-server.mjs');
    await writeFile(slow, 'setTimeout(() => {}, 60_000);\n');
    const config = await mcpConfig({ slow: { command: process.execPath, args: [slow], env: { BHRAIN_TEST_MCP_MARKER: marker } } });
    standin().script({ text: 'without it' });
    const started = Date.now();
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--mcp-config', config, '--input', 'hi'],
      cwd: repo,
      env: envFor({ MCP_TIMEOUT: '1000' }),
    });
    expect(run.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(run.stderr).toMatch(/MCP server 'slow' did not start/);
    expect(await findMarked(marker)).toEqual([]);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'no server process is left after %s (sent while an MCP tool call is in flight): exit 130',
    async (signal) => {
      const marker = randomUUID();
      const config = await mcpConfig({ everything: everything(marker) });
      standin().script(
        { toolCalls: [{ name: 'mcp__everything__trigger-long-running-operation', input: { duration: 60, steps: 60 } }] },
        { text: 'never reached' },
      );
      const child = spawn(
        process.execPath,
        [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'act', '--atom', 'qwen', '--mcp-config', config, '--input', 'wait'],
        {
          cwd: repo,
          env: envFor() as NodeJS.ProcessEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      // the progress line of the call: it is in flight (60 s long) from here
      expect(await waitFor(() => stderr.includes('→ mcp__everything__trigger-long-running-operation'))).toBe(true);
      expect(await findMarked(marker)).toHaveLength(1);
      const sent = Date.now();
      child.kill(signal);
      expect(await closed).toBe(130);
      expect(Date.now() - sent).toBeLessThan(5_000);
      expect(stderr).toContain(`${signal}: stopping`);
      expect(await findMarked(marker)).toEqual([]);
    },
  );

  it('no server process is left after SIGTERM while the model is stalled', async () => {
    const marker = randomUUID();
    const config = await mcpConfig({ everything: everything(marker) });
    standin().script({ stall: 'text' });
    const child = spawn(
      process.execPath,
      [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'act', '--atom', 'qwen', '--mcp-config', config, '--input', 'wait'],
      {
        cwd: repo,
        env: envFor() as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(await waitFor(() => standin().requests.length >= 1)).toBe(true);
    expect(await findMarked(marker)).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await closed).toBe(130);
    expect(await findMarked(marker)).toEqual([]);
  });
});

// `bhrain mcp serve`, bhrain as an MCP server over stdio, driven by the MCP SDK's own client spawning
// the built CLI (bin/bhrain), with the stand-in as the model of every run
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

/** .what = the pids of live processes whose command line is exactly this: what a stopped run must not leave behind */
const findProcesses = async (command: string): Promise<number[]> => {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const lines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
  return pids.filter((_, index) => lines[index].split('\0').join(' ').trim() === command).map(Number);
};

/** .what = waits until a condition holds, polling; false when the time ran out */
const waitFor = async (condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> => {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
};

/** .what = the structured content of a bhrain tool result, as its output schema types it */
interface BhrainToolResult {
  skill: 'ask' | 'act' | null;
  atom: string | null;
  answer: string | null;
  termination: string;
  exitCode: number;
  refs: { series: string | null; episode: string | null };
  record: string | null;
  cost: { usd: number | null };
  tokens: { input: number; output: number } | null;
  iterations: number | null;
  toolCalls: { made: number; failed: number; denied: number };
  error: { code: string; message: string } | null;
}

const { standin } = useStandin();
let base: string;
let home: string;
let root: string;
const clients: Client[] = [];
beforeEach(async () => {
  base = tempDir('bhrain-mcp-serve-');
  home = join(base, 'home');
  root = join(base, 'root');
  await mkdir(join(root, 'app'), { recursive: true });
  execFileSync('git', ['init', '-q', root]);
});
/** what the clients' transports could not read: any line on the server's stdout that is not a JSON-RPC message */
const channelErrors: Error[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  // stdout is the MCP channel: nothing a run does may write anything else there
  expect(channelErrors.splice(0)).toEqual([]);
});
const envFor = () => genCliEnv({ standin: standin(), home }) as Record<string, string>;

/** .what = the MCP SDK's client, connected to `bhrain mcp serve <args>` (the built CLI) spawned in the root */
const connect = async (args: string[] = ['--atom', 'qwen']) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'mcp', 'serve', ...args],
    cwd: root,
    env: envFor(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const client = new Client({ name: 'bhrain-test', version: '1' });
  client.onerror = (error) => channelErrors.push(error);
  clients.push(client);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
};
const structured = (result: unknown): BhrainToolResult => (result as CallToolResult).structuredContent as unknown as BhrainToolResult;
const textOf = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

describe('`bhrain mcp serve` with the MCP SDK client', () => {
  it('mcp serve: lists ask, act and continue with honest annotations and one result schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(['act', 'ask', 'continue']);
    expect(byName.ask.annotations?.readOnlyHint).toBe(true);
    expect(byName.act.annotations?.readOnlyHint).toBe(false);
    expect(byName.act.annotations?.destructiveHint).toBe(true);
    expect(byName.continue.annotations?.readOnlyHint).toBe(false);
    for (const tool of tools) {
      expect(tool.inputSchema.required).toContain('prompt');
      expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['prompt', 'atom', 'cwd', 'maxIterations', 'maxBudgetUsd', 'maxTokens', 'maxWallTime']),
      );
      expect(Object.keys(tool.outputSchema?.properties ?? {})).toEqual(
        expect.arrayContaining(['answer', 'termination', 'exitCode', 'refs', 'cost', 'tokens']),
      );
    }
    // ask is read-only whatever a client asks: it takes no permission
    expect(Object.keys(byName.ask.inputSchema.properties ?? {})).not.toContain('permission');
    expect(byName.continue.inputSchema.required).toContain('ref');
  });

  it('mcp serve: ask answers with the answer, termination, refs and cost as structured content, offering the model only read-only tools, with progress notifications', async () => {
    const { client } = await connect();
    standin().script({ text: 'the retry policy is in src/retry.ts' });
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'ask', arguments: { prompt: 'where is the retry policy?' } }, undefined, {
      onprogress: (each) => progress.push(each),
    });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toBe('the retry policy is in src/retry.ts');
    const content = structured(result);
    expect(content).toMatchObject({
      skill: 'ask',
      answer: 'the retry policy is in src/retry.ts',
      termination: 'complete',
      exitCode: 0,
      error: null,
    });
    expect(content.refs.series).toMatch(/^[0-9a-f]{64}$/);
    expect(content.refs.episode).toMatch(/^[0-9a-f]{64}$/);
    expect(content.tokens!.input).toBeGreaterThan(0);
    expect(content.cost).toHaveProperty('usd');
    expect(content.iterations).toBe(1);
    // the run is recorded and its refs saved as `bhrain ask` does: the record names the root as its cwd
    const meta = JSON.parse(await readFile(join(content.record!, 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({ skill: 'ask', cwd: root, termination: 'complete', refs: { series: content.refs.series } });
    expect(await readdir(join(home, 'refs', 'series'))).toContain(`${content.refs.series}.json`);
    // the model was offered ask's tools only: nothing that writes or runs
    const offered = (standin().requests[0].body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    expect(offered).toContain('read');
    expect(offered).not.toContain('write');
    expect(offered).not.toContain('bash');
    // progress: at least the start and the one iteration, in increasing order
    expect(progress.map((each) => each.message)).toEqual(expect.arrayContaining(['started on qwen/qwen3-coder-plus', 'iteration 1 done']));
    expect(progress.map((each) => each.progress)).toEqual(progress.map((_, index) => index + 1));
  });

  it('mcp serve: act writes a file in the cwd it is given within the root, and continue on its series ref carries the conversation on', async () => {
    const { client } = await connect();
    standin().script(
      { toolCalls: [{ name: 'write', input: { path: 'notes.md', content: '# notes\n' } }] },
      { text: 'wrote notes.md' },
      { text: 'it holds a heading' },
    );
    const progress: Progress[] = [];
    const acted = await client.callTool({ name: 'act', arguments: { prompt: 'write notes.md', cwd: 'app' } }, undefined, {
      onprogress: (each) => progress.push(each),
    });
    expect(acted.isError).toBe(false);
    expect(structured(acted)).toMatchObject({ skill: 'act', answer: 'wrote notes.md', termination: 'complete', toolCalls: { made: 1 } });
    expect(await readFile(join(root, 'app', 'notes.md'), 'utf8')).toBe('# notes\n');
    expect(progress.map((each) => each.message)).toContain('tool call: write');

    const series = structured(acted).refs.series!;
    const continued = await client.callTool({
      name: 'continue',
      arguments: { ref: series.slice(0, 12), prompt: 'what is in it?', cwd: 'app' },
    });
    expect(continued.isError).toBe(false);
    expect(structured(continued)).toMatchObject({ skill: 'ask', answer: 'it holds a heading', termination: 'complete' });
    // the model saw the first run's conversation: its write call and its answer came before the new prompt
    const history = JSON.stringify(standin().requests[2].body.messages);
    expect(history).toContain('write notes.md');
    expect(history).toContain('wrote notes.md');
    expect(history).toContain('what is in it?');
    expect(structured(continued).refs.series).not.toBe(series);
  });

  it('mcp serve: calls in flight at once each get their own run and answer', async () => {
    const { client } = await connect();
    // each run's model answers with the prompt it was given: a mix-up between runs shows
    standin().respond = (request) => ({ text: `answer to ${JSON.stringify(request.body.messages).match(/question (\d)/)?.[0]}` });
    const answers = await Promise.all(
      [1, 2, 3].map((n) => client.callTool({ name: 'ask', arguments: { prompt: `question ${n}` } }).then(structured)),
    );
    expect(answers.map((answer) => answer.answer)).toEqual(['answer to question 1', 'answer to question 2', 'answer to question 3']);
    expect(new Set(answers.map((answer) => answer.refs.series)).size).toBe(3);
    expect(new Set(answers.map((answer) => answer.record)).size).toBe(3);
  });

  it('mcp serve: a run after an act that ran bash in the root starts, and the idle sandbox holds nothing on the host where an absent .mcp.json would be', async () => {
    const { client } = await connect();
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo hi > hi.txt' } }] }, { text: 'said hi' });
    const acted = await client.callTool({ name: 'act', arguments: { prompt: 'say hi' } });
    expect(structured(acted)).toMatchObject({ answer: 'said hi', toolCalls: { made: 1, failed: 0 } });
    expect(await readFile(join(root, 'hi.txt'), 'utf8')).toBe('hi\n');
    // the sandbox waits for the next call, and an absent protected path is swept after each command, not held by a mount
    // point: the next run finds no .mcp.json at all
    expect(await stat(join(root, '.mcp.json')).catch(() => null)).toBeNull();
    standin().script({ text: 'read it' });
    const asked = await client.callTool({ name: 'ask', arguments: { prompt: 'what is in hi.txt?' } });
    expect(asked.isError).toBe(false);
    expect(textOf(asked)).toBe('read it');
  });
});

describe('`bhrain mcp serve` bounds every call', () => {
  it('mcp serve: a cwd outside the root, or a symlink inside it that leads out, is a tool error naming the root, and no model request is made', async () => {
    const { client } = await connect();
    const outside = tempDir('bhrain-outside-');
    await symlink(outside, join(root, 'escape'));
    // a path outside that does not exist is refused the same way: the client learns nothing of what is outside
    for (const cwd of [outside, '..', 'escape', 'app/../..', join(outside, 'nope')]) {
      const result = await client.callTool({ name: 'act', arguments: { prompt: 'write x', cwd } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`outside the server's root ${root}`);
    }
    const missing = await client.callTool({ name: 'ask', arguments: { prompt: 'hi', cwd: 'no-such-dir' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain(`not a directory within the server's root ${root}`);
    expect(standin().requests).toHaveLength(0);
  });

  it('mcp serve: continue on an @file ref reads an exported ref within the root, and refuses a file outside it without reading it', async () => {
    const { client } = await connect();
    standin().script({ text: 'first answer' }, { text: 'second answer' });
    const first = structured(await client.callTool({ name: 'ask', arguments: { prompt: 'first?' } }));
    const exported = await runBhrain({ args: ['export', first.refs.series!], cwd: root, env: envFor() });
    expect(exported.code).toBe(0);
    await writeFile(join(root, 'app', 'plan.json'), exported.stdout);
    const continued = await client.callTool({ name: 'continue', arguments: { ref: '@plan.json', cwd: 'app', prompt: 'second?' } });
    expect(structured(continued)).toMatchObject({ answer: 'second answer', termination: 'complete' });
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('first answer');

    const secret = join(tempDir('bhrain-secret-'), 'secret.json');
    await writeFile(secret, 'SECRET-CONTENT-9d1e');
    await symlink(secret, join(root, 'app', 'link.json'));
    // absolute, relative to the call's cwd, a symlink within the root that leads out, and a file that does not exist
    const refs = [`@${secret}`, `@${relative(join(root, 'app'), secret)}`, '@link.json', `@${secret}.missing`];
    for (const ref of refs) {
      const refused = await client.callTool({ name: 'continue', arguments: { ref, cwd: 'app', prompt: 'go on' } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`is outside the server's root ${root}`);
      expect(textOf(refused)).not.toContain('SECRET-CONTENT');
    }
    expect(standin().requests).toHaveLength(2);
  });

  it("mcp serve: a client's permission only tightens: readOnly denies act's write, allowAll does not loosen a server started with --permission readOnly", async () => {
    const narrowed = await connect();
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'a' } }] }, { text: 'could not write' });
    const denied = await narrowed.client.callTool({ name: 'act', arguments: { prompt: 'write a.txt', permission: 'readOnly' } });
    expect(structured(denied)).toMatchObject({ answer: 'could not write', toolCalls: { denied: 1 } });
    await expect(readFile(join(root, 'a.txt'), 'utf8')).rejects.toThrow(/ENOENT/);

    const readOnlyServer = await connect(['--atom', 'qwen', '--permission', 'readOnly']);
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'b.txt', content: 'b' } }] }, { text: 'could not write either' });
    const stillDenied = await readOnlyServer.client.callTool({ name: 'act', arguments: { prompt: 'write b.txt', permission: 'allowAll' } });
    expect(structured(stillDenied)).toMatchObject({ answer: 'could not write either', toolCalls: { denied: 1 } });
    await expect(readFile(join(root, 'b.txt'), 'utf8')).rejects.toThrow(/ENOENT/);

    // rules from the client deny what the server allows: the server's allowAll is narrowed to them
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'c.txt', content: 'c' } }] }, { text: 'denied by the rules' });
    const ruled = await narrowed.client.callTool({
      name: 'act',
      arguments: { prompt: 'write c.txt', permission: { deny: ['write(**)'] } },
    });
    expect(structured(ruled)).toMatchObject({ toolCalls: { denied: 1 } });
    await expect(readFile(join(root, 'c.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it("refuses a client's inline rule that does not parse, as it refuses a settings file's: naming the rule and where it is, before any request", async () => {
    const { client } = await connect();
    const refused = await client.callTool({
      name: 'act',
      arguments: { prompt: 'write d.txt', permission: { deny: ['write(**)', 'write(('] } },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("invalid permission rule 'write(('");
    expect(textOf(refused)).toContain('permission.deny[1]');
    expect(standin().requests).toHaveLength(0);
  });

  it("mcp serve: a client's budget only lowers the server's: maxIterations 1 stops a run the server would let go on, as a tool error with the partial run's refs", async () => {
    const { client } = await connect(['--atom', 'qwen', '--max-iterations', '5']);
    standin().script(
      { toolCalls: [{ name: 'read', input: { path: 'nothing.txt' } }] },
      { toolCalls: [{ name: 'read', input: { path: 'nothing.txt' } }] },
      { text: 'never reached' },
    );
    const result = await client.callTool({ name: 'ask', arguments: { prompt: 'loop', maxIterations: 1 } });
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({ termination: 'max-iterations', exitCode: 3, iterations: 1 });
    expect(structured(result).refs.series).toMatch(/^[0-9a-f]{64}$/);
    expect(textOf(result)).toMatch(/^bhrain ask ended: max-iterations \(exit 3\)/);
    expect(standin().requests).toHaveLength(1);
  });

  it('mcp serve: a bad atom is a tool error naming it; the server goes on serving', async () => {
    const { client } = await connect();
    const bad = await client.callTool({ name: 'ask', arguments: { prompt: 'hi', atom: 'gpt/none' } });
    expect(bad.isError).toBe(true);
    expect(structured(bad)).toMatchObject({ termination: 'usage', exitCode: 2 });
    expect(textOf(bad)).toContain('gpt/none');
    standin().script({ text: 'still here' });
    const good = await client.callTool({ name: 'ask', arguments: { prompt: 'hi' } });
    expect(textOf(good)).toBe('still here');
  });
});

describe('`bhrain mcp serve` stops runs as asked, and refuses bad flags', () => {
  it('mcp serve: a cancelled call stops its run: the bash command it ran is killed, the run is recorded as interrupted, and the server serves the next call', async () => {
    const { client } = await connect();
    // a sleep of a length nothing else uses, so the process table shows whether it survived
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'sleep 30.0533' } }] }, { text: 'never reached' });
    const cancel = new AbortController();
    const call = client.callTool({ name: 'act', arguments: { prompt: 'wait a while' } }, undefined, { signal: cancel.signal });
    call.catch(() => {});
    expect(await waitFor(async () => (await findProcesses('sleep 30.0533')).length === 1)).toBe(true);
    cancel.abort();
    await expect(call).rejects.toThrow(/abort/i);
    // the run stops: its record says interrupted, its refs are saved, and the sleep is gone
    const runs = join(home, 'runs');
    const readMeta = async () => {
      const ids = await readdir(runs).catch(() => []);
      return ids.length === 1 ? JSON.parse(await readFile(join(runs, ids[0], 'meta.json'), 'utf8')) : null;
    };
    expect(await waitFor(async () => (await readMeta())?.termination !== null && (await readMeta()) !== null, 10_000)).toBe(true);
    const meta = await readMeta();
    expect(meta).toMatchObject({ skill: 'act', termination: 'interrupted' });
    expect(await readdir(join(home, 'refs', 'series'))).toContain(`${meta.refs.series}.json`);
    expect(await findProcesses('sleep 30.0533')).toEqual([]);
    // the scripted answer after the bash call was never asked for
    expect(standin().requests).toHaveLength(1);
    standin().reset();
    standin().script({ text: 'next one' });
    expect(textOf(await client.callTool({ name: 'ask', arguments: { prompt: 'hi' } }))).toBe('next one');
  });

  it('mcp serve: the client closing stdin stops a run in flight and the server exits 0, leaving no process', async () => {
    const { client, transport, stderr } = await connect();
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'sleep 30.0619' } }] }, { text: 'never reached' });
    const call = client.callTool({ name: 'act', arguments: { prompt: 'wait a while' } });
    call.catch(() => {});
    expect(await waitFor(async () => (await findProcesses('sleep 30.0619')).length === 1)).toBe(true);
    const pid = transport.pid!;
    await client.close();
    expect(await waitFor(async () => !(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')), 10_000)).toBe(true);
    expect(await findProcesses('sleep 30.0619')).toEqual([]);
    expect(stderr()).toMatch(/stopping \(the client closed stdin\); 1 run\(s\) in flight are stopped/);
  });

  it('mcp serve: SIGTERM stops a run in flight (its bash command killed, its record interrupted) and the server exits 0', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'mcp', 'serve', '--atom', 'qwen'],
      cwd: root,
      env: envFor(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'bhrain-test', version: '1' });
    clients.push(client);
    let exitCode: number | null | undefined;
    await client.connect(transport);
    const child = (transport as unknown as { _process: import('node:child_process').ChildProcess })._process;
    child.on('exit', (code) => (exitCode = code));
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'sleep 30.0727' } }] }, { text: 'never reached' });
    client.callTool({ name: 'act', arguments: { prompt: 'wait a while' } }).catch(() => {});
    expect(await waitFor(async () => (await findProcesses('sleep 30.0727')).length === 1)).toBe(true);
    child.kill('SIGTERM');
    expect(await waitFor(() => exitCode !== undefined, 10_000)).toBe(true);
    expect(exitCode).toBe(0);
    expect(await findProcesses('sleep 30.0727')).toEqual([]);
    const ids = await readdir(join(home, 'runs'));
    expect(JSON.parse(await readFile(join(home, 'runs', ids[0], 'meta.json'), 'utf8'))).toMatchObject({ termination: 'interrupted' });
  });

  it('mcp serve: a bad flag or root is exit 2 before serving, and --help names the tools', async () => {
    const cwd = base;
    const badRoot = await runBhrain({ args: ['mcp', 'serve', '--root', join(base, 'nope')], cwd, env: envFor() });
    expect(badRoot.code).toBe(2);
    expect(badRoot.stderr).toContain(`--root ${join(base, 'nope')}: not a directory`);
    expect(badRoot.stdout).toBe('');
    const badFlag = await runBhrain({ args: ['mcp', 'serve', '--max-iterations', 'many'], cwd, env: envFor() });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--max-iterations');
    const badPermission = await runBhrain({ args: ['mcp', 'serve', '--permission', 'no-such-rules.json'], cwd, env: envFor() });
    expect(badPermission.code).toBe(2);
    expect(badPermission.stderr).toContain('no-such-rules.json');
    const unknown = await runBhrain({ args: ['mcp', 'serve', '--no-such-flag'], cwd, env: envFor() });
    expect(unknown.code).toBe(2);
    const help = await runBhrain({ args: ['mcp', 'serve', '--help'], cwd, env: envFor() });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/tools ask \(read-only\), act and\s+continue/);
  });
});

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { signalGroup } from '../../../process/signalGroup.js';
import { genBhrain, invoke } from '../../genBhrain.js';
import { attachMcpToolBox } from './attachMcpToolBox.js';
import { genMcpToolBox, McpServerStartError, toMcpToolName, type McpToolBox } from './genMcpToolBox.js';
import { tempDir } from '#test-helpers/fs.js';
import { toolResults } from '#test-helpers/transcript.js';

const { standin, contextFor } = useStandin();
const everythingJs = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const filesystemJs = resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const mcpServerJs = pathToFileURL(resolve('node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js')).href;
const stdioServerJs = pathToFileURL(resolve('node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js')).href;
const toolContext = () => ({
  cwd: process.cwd(),
  env: { PATH: process.env.PATH, HOME: process.env.HOME },
  log: { debug() {}, info() {}, warn() {}, error() {} },
});
const toolNamesOffered = (body: unknown) => ((body as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name);

/** every live process as pid, process group and command line, from ps */
const processes = () =>
  execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && !match[3].startsWith('Z'))
    .map((match) => ({ pid: Number(match[1]), pgid: Number(match[2]), args: match[4] }));
const groupMembers = (pgid: number) => processes().filter((entry) => entry.pgid === pgid);
const waitFor = async (check: () => boolean, timeoutMs = 5_000) => {
  const until = Date.now() + timeoutMs;
  while (!check() && Date.now() < until) await new Promise((done) => setTimeout(done, 25));
  return check();
};

// boxes a test opened, closed after it even when it fails
const opened: McpToolBox[] = [];
const everything = async (): Promise<McpToolBox> => {
  const box = await genMcpToolBox(
    { name: 'everything', transport: { command: process.execPath, args: [everythingJs, 'stdio'] } },
    toolContext(),
  );
  opened.push(box);
  return box;
};
afterEach(async () => {
  await Promise.all(opened.splice(0).map((box) => box.close()));
});

describe('genMcpToolBox over stdio (server-everything, server-filesystem): listing and calls', () => {
  it('tools are offered as mcp__<server>__<tool> with the server description and input schema', async () => {
    const box = await everything();
    expect(box.name).toBe('mcp__everything');
    expect(box.server).toBe('everything');
    expect(groupMembers(box.pid!).map((entry) => entry.pid)).toContain(box.pid);
    const echo = box.definitions.find((definition) => definition.name === 'mcp__everything__echo');
    expect(echo?.description).toBe('Echoes back the input string');
    expect(echo?.inputSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string', description: 'Message to echo' } },
      required: ['message'],
    });
    expect(box.definitions.map((definition) => definition.name)).toEqual(
      expect.arrayContaining(['mcp__everything__get-sum', 'mcp__everything__get-tiny-image']),
    );
    expect(box.definitions.every((definition) => /^mcp__everything__[A-Za-z0-9_-]+$/.test(definition.name))).toBe(true);
    expect(toMcpToolName('my.server', 'read file/v2')).toBe('mcp__my_server__read_file_v2');
    expect(toMcpToolName('s', 'x'.repeat(300))).toHaveLength(64);
  });

  it('server-filesystem lists its tools and reads a file of the directory it was given', async () => {
    const dir = await tempDir('bhrain-mcp-');
    await writeFile(join(dir, 'notes.md'), '# filesystem notes\n');
    const box = await genMcpToolBox({ name: 'fs', transport: { command: process.execPath, args: [filesystemJs, dir] } }, toolContext());
    opened.push(box);
    const names = box.definitions.map((definition) => definition.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__fs__read_text_file', 'mcp__fs__list_directory', 'mcp__fs__write_file']));
    const read = await box.execute(
      { call: { id: 'c1', name: 'mcp__fs__read_text_file', input: { path: join(dir, 'notes.md') } } },
      toolContext(),
    );
    expect(read).toEqual({ callId: 'c1', success: true, output: '# filesystem notes\n' });
    const outside = await box.execute(
      { call: { id: 'c2', name: 'mcp__fs__read_text_file', input: { path: '/etc/hostname' } } },
      toolContext(),
    );
    expect(outside.success).toBe(false);
    expect(outside.output).toMatch(/access denied|outside allowed/i);
  });

  it('a call through a real bhrain loop runs tools/call, and its result reaches the model', async () => {
    const box = await everything();
    standin().script(
      { toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'hi from bhrain' } }] },
      { text: 'the server echoed' },
    );
    const result = await invoke({ config: { atom: 'claude/haiku', toolBoxes: [box] }, prompt: 'echo something' }, contextFor());
    expect(result.output).toBe('the server echoed');
    expect(toolNamesOffered(standin().requests[0].body)).toContain('mcp__everything__echo');
    expect(toolResults(result)[0]).toMatchObject({ isError: false, content: 'Echo: hi from bhrain' });
    expect(JSON.stringify(standin().requests[1].body)).toContain('Echo: hi from bhrain');
  });

  it('a result with isError true is a failed result carrying the server text', async () => {
    const dir = await tempDir('bhrain-mcp-');
    const box = await genMcpToolBox({ name: 'fs', transport: { command: process.execPath, args: [filesystemJs, dir] } }, toolContext());
    opened.push(box);
    const result = await box.execute(
      { call: { id: 'c1', name: 'mcp__fs__read_text_file', input: { path: join(dir, 'missing.md') } } },
      toolContext(),
    );
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/ENOENT|no such file/i);
  });

  it("tool contract: an MCP tool's input is checked once against the server's schema, before the server is called", async () => {
    const box = await everything();
    const result = await box.execute({ call: { id: 'c1', name: 'mcp__everything__echo', input: {} } }, toolContext());
    expect(result).toEqual({
      callId: 'c1',
      success: false,
      output:
        'the arguments of mcp__everything__echo do not fit its schema: input.message is required. Call mcp__everything__echo again with corrected arguments',
    });
  });
});

describe('genMcpToolBox over stdio: content, aborts, timeouts, env, and a server that exits mid-run', () => {
  it('non-text content is described, not dropped: images by type and size, embedded resources with their text, links by uri', async () => {
    const box = await everything();
    const image = await box.execute({ call: { id: 'c1', name: 'mcp__everything__get-tiny-image', input: {} } }, toolContext());
    expect(image.success).toBe(true);
    expect(image.output).toMatch(
      /^Here's the image you requested:\n\[image\/png, \d{3,5} bytes, not shown\]\nThe image above is the MCP logo\.$/,
    );
    const links = await box.execute(
      { call: { id: 'c2', name: 'mcp__everything__get-resource-links', input: { count: 2 } } },
      toolContext(),
    );
    expect(links.output).toMatch(/\[resource link: .+ demo:\/\/resource\/\S+/);
    const embedded = await box.execute(
      { call: { id: 'c3', name: 'mcp__everything__get-resource-reference', input: { resourceType: 'Text', resourceId: 1 } } },
      toolContext(),
    );
    expect(embedded.output).toMatch(/\[resource demo:\/\/resource\/\S+\]\n\S/);
    const blob = await box.execute(
      { call: { id: 'c4', name: 'mcp__everything__get-resource-reference', input: { resourceType: 'Blob', resourceId: 1 } } },
      toolContext(),
    );
    expect(blob.output).toMatch(/\[resource demo:\/\/resource\/\S+, [a-z]+\/[\w.+-]+, \d+ bytes, not shown\]/);
  });

  it('an aborted run stops waiting for a call, and a call past callTimeoutMs is a failed result; the server stays usable', async () => {
    const box = await genMcpToolBox(
      { name: 'everything', transport: { command: process.execPath, args: [everythingJs, 'stdio'] }, callTimeoutMs: 400 },
      toolContext(),
    );
    opened.push(box);
    const slowCall = { id: 'c1', name: 'mcp__everything__trigger-long-running-operation', input: { duration: 5, steps: 1 } };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    let started = Date.now();
    const aborted = await box.execute({ call: slowCall }, { ...toolContext(), signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(350);
    expect(aborted).toEqual({
      callId: 'c1',
      success: false,
      output: 'mcp__everything__trigger-long-running-operation was aborted before the MCP server answered',
    });
    started = Date.now();
    const timedOut = await box.execute({ call: slowCall }, toolContext());
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(timedOut.success).toBe(false);
    expect(timedOut.output).toMatch(/^the MCP tool mcp__everything__trigger-long-running-operation failed: .*timed out/i);
    expect(
      await box.execute({ call: { id: 'c3', name: 'mcp__everything__echo', input: { message: 'still here' } } }, toolContext()),
    ).toMatchObject({ output: 'Echo: still here' });
  });

  it("a stdio server gets the safe variables of the injected env plus its own, not bhrain's supplier keys", async () => {
    const context = { ...toolContext(), env: { ...toolContext().env, ANTHROPIC_API_KEY: 'sk-must-not-leak', USER: 'bhrain-test-user' } };
    const box = await genMcpToolBox(
      { name: 'everything', transport: { command: process.execPath, args: [everythingJs, 'stdio'], env: { SERVER_OWN_SETTING: 'on' } } },
      context,
    );
    opened.push(box);
    const env = JSON.parse((await box.execute({ call: { id: 'c1', name: 'mcp__everything__get-env', input: {} } }, toolContext())).output);
    expect(env).toMatchObject({ SERVER_OWN_SETTING: 'on', USER: 'bhrain-test-user', PATH: process.env.PATH });
    expect(JSON.stringify(env)).not.toContain('sk-must-not-leak');
  });

  it('a server that exits mid-run gives failed results that say so, and the loop finishes', async () => {
    const box = await everything();
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [box] });
    // the server is killed once its first result is in; the model asks again after that
    brain.subscribe((event) => {
      if (event.type === 'ToolExecutionCompleted' && event.callId === 'first') process.kill(box.pid!, 'SIGKILL');
    });
    standin().script(
      { toolCalls: [{ id: 'first', name: 'mcp__everything__echo', input: { message: 'one' } }] },
      {
        delayMs: 300,
        then: {
          toolCalls: [
            { name: 'mcp__everything__echo', input: { message: 'two' } },
            { name: 'mcp__everything__get-sum', input: { a: 1, b: 2 } },
          ],
        },
      },
      { text: 'the server is gone, carrying on' },
    );
    const result = await brain.invoke({ prompt: 'echo twice' }, contextFor());
    const [first, second, third] = toolResults(result);
    expect(first).toMatchObject({ isError: false, content: 'Echo: one' });
    for (const after of [second, third]) {
      expect(after.isError).toBe(true);
      expect(after.content).toMatch(
        /^MCP server 'everything' exited \(killed by SIGKILL\).*; its tools are unavailable for the rest of this run$/s,
      );
    }
    expect(result.output).toBe('the server is gone, carrying on');
    expect(await waitFor(() => groupMembers(box.pid!).length === 0)).toBe(true);
  });
});

describe('genMcpToolBox over stdio: servers that never start, close, and tools that change', () => {
  it('a command that does not exist rejects with McpServerStartError naming the server', async () => {
    const error = await genMcpToolBox({ name: 'broken', transport: { command: 'bhrain-no-such-mcp-server' } }, toolContext()).catch(
      (caught) => caught,
    );
    expect(error).toBeInstanceOf(McpServerStartError);
    expect(error).toMatchObject({ server: 'broken', code: 'MCP_SERVER_START' });
    expect(error.message).toMatch(/^MCP server 'broken' did not start: could not run "bhrain-no-such-mcp-server": .*ENOENT/);
  });

  it('a server that exits before answering rejects with its exit code and stderr tail', async () => {
    const script = "console.error('fatal: GITHUB_TOKEN is not set'); process.exit(3)";
    const error = await genMcpToolBox(
      { name: 'github', transport: { command: process.execPath, args: ['-e', script] } },
      toolContext(),
    ).catch((caught) => caught);
    expect(error).toBeInstanceOf(McpServerStartError);
    expect(error.server).toBe('github');
    expect(error.message).toBe("MCP server 'github' did not start: it exited (code 3) before answering: fatal: GITHUB_TOKEN is not set");
  });

  it("only the last 8 KB of a chatty server's stderr is kept, from a whole line", async () => {
    const script =
      "for (let i = 0; i < 1500; i++) console.error('noise line ' + i); console.error('the real reason'); process.exitCode = 1";
    const error = await genMcpToolBox(
      { name: 'chatty', transport: { command: process.execPath, args: ['-e', script] } },
      toolContext(),
    ).catch((caught) => caught);
    expect(error.message).toMatch(/before answering: noise line \d+\n[\s\S]*\nthe real reason$/);
    expect(error.message.length).toBeLessThan(8 * 1024 + 200);
    expect(error.message).not.toContain('noise line 0\n');
  });

  it('a server silent past startTimeoutMs is rejected and killed, its whole group with it', async () => {
    const dir = await tempDir('bhrain-mcp-');
    const marker = `bhrain-slow-${process.pid}-${Date.now()}`;
    // a server that starts a child of its own (which ignores SIGTERM), says which, then never speaks
    const slow = join(dir, `${marker}.mjs`);
    await writeFile(
      slow,
      `import { spawn } from 'node:child_process';\nconst child = spawn('bash', ['-c', 'trap "" TERM; sleep 300 & wait'], { stdio: 'ignore' });\nconsole.error('warming up, child ' + child.pid);\nsetTimeout(() => {}, 300_000);\n`,
    );
    const started = Date.now();
    const error = await genMcpToolBox(
      { name: 'slow', transport: { command: process.execPath, args: [slow] }, startTimeoutMs: 500 },
      toolContext(),
    ).catch((caught) => caught);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(error).toBeInstanceOf(McpServerStartError);
    expect(error.message).toMatch(/^MCP server 'slow' did not start: no answer within 500 ms, so it was killed: warming up, child \d+\./);
    const childPid = Number(/child (\d+)/.exec(error.message)![1]);
    expect(processes().filter((entry) => entry.args.includes(marker))).toEqual([]);
    expect(await waitFor(() => !processes().some((entry) => entry.pid === childPid || entry.pgid === childPid))).toBe(true);
  });

  it('close() kills the server and every process of its group, even one that ignores SIGTERM', async () => {
    const dir = await tempDir('bhrain-mcp-');
    // a real MCP server that also started a child which ignores SIGTERM
    const server = join(dir, 'stubborn.mjs');
    await writeFile(
      server,
      `import { spawn } from 'node:child_process';
import { McpServer } from '${mcpServerJs}';
import { StdioServerTransport } from '${stdioServerJs}';
spawn('bash', ['-c', 'trap "" TERM; sleep 300 & wait'], { stdio: 'ignore' });
const server = new McpServer({ name: 'stubborn', version: '1.0.0' });
server.registerTool('ping', { description: 'answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());
`,
    );
    const box = await genMcpToolBox({ name: 'stubborn', transport: { command: process.execPath, args: [server] } }, toolContext());
    const pgid = box.pid!;
    expect(await waitFor(() => groupMembers(pgid).length >= 3)).toBe(true);
    await box.close();
    expect(await waitFor(() => groupMembers(pgid).length === 0, 3_000)).toBe(true);
    const after = await box.execute({ call: { id: 'c1', name: 'mcp__stubborn__ping', input: {} } }, toolContext());
    expect(after).toMatchObject({ success: false, output: expect.stringMatching(/^MCP server 'stubborn' was closed/) });
  });

  it('close() of server-everything leaves no process of its group', async () => {
    const box = await genMcpToolBox(
      { name: 'everything', transport: { command: process.execPath, args: [everythingJs, 'stdio'] } },
      toolContext(),
    );
    expect(groupMembers(box.pid!).length).toBeGreaterThan(0);
    await box.close();
    expect(groupMembers(box.pid!)).toEqual([]);
  });

  it('a tools/list_changed updates the tools a running brain offers, between iterations', async () => {
    const dir = await tempDir('bhrain-mcp-');
    const server = join(dir, 'growing.mjs');
    await writeFile(
      server,
      `import { McpServer } from '${mcpServerJs}';
import { StdioServerTransport } from '${stdioServerJs}';
const server = new McpServer({ name: 'growing', version: '1.0.0' });
server.registerTool('unlock', { description: 'adds the secret tool' }, async () => {
  server.registerTool('secret', { description: 'a tool that appears at runtime' }, async () => ({ content: [{ type: 'text', text: 'the secret is 42' }] }));
  return { content: [{ type: 'text', text: 'unlocked' }] };
});
await server.connect(new StdioServerTransport());
`,
    );
    const box = await genMcpToolBox({ name: 'growing', transport: { command: process.execPath, args: [server] } }, toolContext());
    opened.push(box);
    expect(box.definitions.map((definition) => definition.name)).toEqual(['mcp__growing__unlock']);
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [box] });
    const detach = attachMcpToolBox(brain, box);
    standin().script(
      { toolCalls: [{ name: 'mcp__growing__unlock', input: {} }] },
      { delayMs: 300, then: { toolCalls: [{ name: 'mcp__growing__secret', input: {} }] } },
      { text: 'the secret is 42' },
    );
    const result = await brain.invoke({ prompt: 'find the secret' }, contextFor());
    detach();
    expect(toolNamesOffered(standin().requests[0].body)).not.toContain('mcp__growing__secret');
    expect(toolNamesOffered(standin().requests[2].body)).toEqual(expect.arrayContaining(['mcp__growing__unlock', 'mcp__growing__secret']));
    expect(toolResults(result).map((message) => [message.isError, message.content])).toEqual([
      [false, 'unlocked'],
      [false, 'the secret is 42'],
    ]);
    expect(brain.toolBoxes.list().find((listed) => listed.name === 'mcp__growing')?.definitions).toHaveLength(2);
  });
});

describe('genMcpToolBox over streamable HTTP (server-everything streamableHttp)', () => {
  let everythingHttp: ChildProcess;
  let proxy: Server;
  let proxyUrl: string;
  const seen: Array<{ method?: string; headers: IncomingHttpHeaders }> = [];

  beforeAll(async () => {
    // a free port for the server: bind one, release it, hand it over
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => done(free));
      });
    });
    everythingHttp = spawn(process.execPath, [everythingJs, 'streamableHttp'], {
      env: { PATH: process.env.PATH, PORT: String(port) },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((done, fail) => {
      let stderr = '';
      everythingHttp.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('listening on port')) done();
      });
      everythingHttp.once('exit', (code) => fail(new Error(`server-everything streamableHttp exited ${code}: ${stderr}`)));
    });
    // a pass-through in front of the server records the headers each request carried to it
    proxy = createServer((incoming, outgoing) => {
      seen.push({ method: incoming.method, headers: incoming.headers });
      const forward = httpRequest(
        { host: '127.0.0.1', port, path: incoming.url, method: incoming.method, headers: incoming.headers },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forward.on('error', () => outgoing.destroy());
      incoming.pipe(forward);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    signalGroup(everythingHttp?.pid, 'SIGKILL');
    proxy?.closeAllConnections();
    await new Promise<void>((done) => (proxy ? proxy.close(() => done()) : done()));
  });

  it('lists and calls tools over streamable HTTP, with the configured header on every request; close ends the session', async () => {
    const box = await genMcpToolBox(
      { name: 'remote', transport: { type: 'http', url: proxyUrl, headers: { 'X-Bhrain-Token': 'token-123' } } },
      toolContext(),
    );
    expect(box.pid).toBeNull();
    expect(box.definitions.find((definition) => definition.name === 'mcp__remote__echo')?.description).toBe('Echoes back the input string');
    const echo = await box.execute({ call: { id: 'c1', name: 'mcp__remote__echo', input: { message: 'over http' } } }, toolContext());
    expect(echo).toEqual({ callId: 'c1', success: true, output: 'Echo: over http' });
    const posts = seen.filter((request) => request.method === 'POST');
    expect(posts.length).toBeGreaterThanOrEqual(3);
    expect(posts.every((request) => request.headers['x-bhrain-token'] === 'token-123')).toBe(true);
    await box.close();
    expect(seen.filter((request) => request.method === 'DELETE').map((request) => request.headers['x-bhrain-token'])).toEqual([
      'token-123',
    ]);
    expect(
      await box.execute({ call: { id: 'c2', name: 'mcp__remote__echo', input: { message: 'after close' } } }, toolContext()),
    ).toMatchObject({ success: false });
  });

  it('an endpoint that refuses the connection rejects with McpServerStartError naming the server and the error', async () => {
    const error = await genMcpToolBox({ name: 'down', transport: { type: 'http', url: 'http://127.0.0.1:9/mcp' } }, toolContext()).catch(
      (caught) => caught,
    );
    expect(error).toBeInstanceOf(McpServerStartError);
    expect(error.server).toBe('down');
    expect(error.message).toMatch(/^MCP server 'down' did not start: http:\/\/127\.0\.0\.1:9\/mcp failed: .*fetch failed|ECONNREFUSED/);
  });
});

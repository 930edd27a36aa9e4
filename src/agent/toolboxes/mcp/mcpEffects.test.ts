// an MCP tool takes its effect from the server's annotations, against the real reference servers
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import type { BrainToolMessage } from '../../../core/contract/BrainMessage.js';
import type { BhrainSessionResult } from '../../BhrainSessionResult.js';
import { invoke } from '../../genBhrain.js';
import { readOnly } from '../../permission/builtinGuards.js';
import { genBrainRepl } from '../../repl/genBrainRepl.js';
import { attachMcpToolBox } from './attachMcpToolBox.js';
import { effectOfMcpTool, genMcpToolBox, type McpToolBox } from './genMcpToolBox.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const everythingJs = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const filesystemJs = resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const mcpServerJs = pathToFileURL(resolve('node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js')).href;
const stdioServerJs = pathToFileURL(resolve('node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js')).href;
const toolContext = () => ({ cwd: process.cwd(), env: { PATH: process.env.PATH, HOME: process.env.HOME } });
const toolMessages = (result: BhrainSessionResult) =>
  result.transcript.filter((message): message is BrainToolMessage => message.role === 'tool');
const offered = (body: unknown) => ((body as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name);
const effectsOf = (box: McpToolBox) => Object.fromEntries((box.tools ?? []).map((tool) => [tool.name, tool.effect]));

let everything: McpToolBox;
let filesystem: McpToolBox;
let plain: McpToolBox;
beforeAll(async () => {
  const dir = tempDir('bhrain-mcp-effects-');
  // a server built on the SDK whose one tool says nothing about what it does
  const server = join(dir, 'plain.mjs');
  await writeFile(
    server,
    `import { McpServer } from '${mcpServerJs}';
import { StdioServerTransport } from '${stdioServerJs}';
const server = new McpServer({ name: 'plain', version: '1.0.0' });
server.registerTool('ping', { description: 'answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());
`,
  );
  [everything, filesystem, plain] = await Promise.all([
    genMcpToolBox({ name: 'everything', transport: { command: process.execPath, args: [everythingJs, 'stdio'] } }, toolContext()),
    genMcpToolBox({ name: 'fs', transport: { command: process.execPath, args: [filesystemJs, dir] } }, toolContext()),
    genMcpToolBox({ name: 'plain', transport: { command: process.execPath, args: [server] } }, toolContext()),
  ]);
});
afterAll(async () => Promise.all([everything?.close(), filesystem?.close(), plain?.close()]));

describe('tool contract: MCP tools take their effect from the server annotations', () => {
  it('tool contract: readOnlyHint → read, openWorldHint → network, destructiveHint or none → unknown (null)', () => {
    expect(effectsOf(everything)).toMatchObject({
      mcp__everything__echo: 'read',
      'mcp__everything__gzip-file-as-resource': 'network',
      'mcp__everything__toggle-simulated-logging': null,
    });
    expect(effectsOf(filesystem)).toMatchObject({ mcp__fs__read_text_file: 'read', mcp__fs__write_file: null });
    expect(effectsOf(plain)).toEqual({ mcp__plain__ping: null });
    expect(effectOfMcpTool({ annotations: { readOnlyHint: true, openWorldHint: true } })).toBe('read');
    expect(effectOfMcpTool({ annotations: { destructiveHint: true, openWorldHint: true } })).toBe(null);
    expect(effectOfMcpTool({})).toBe(null);
  });

  it('tool contract: under readOnly, a tool annotated readOnlyHint runs; one that is not, or is unannotated, is denied', async () => {
    standin().script(
      {
        toolCalls: [
          { name: 'mcp__everything__echo', input: { message: 'read-only hello' } },
          { name: 'mcp__everything__toggle-simulated-logging', input: {} },
          { name: 'mcp__plain__ping', input: {} },
        ],
      },
      { text: 'done' },
    );
    const result = await invoke(
      { config: { atom: 'claude/haiku', toolBoxes: [everything, plain], permissionGuard: readOnly }, prompt: 'echo' },
      contextFor(),
    );
    const [echo, toggle, ping] = toolMessages(result);
    expect(echo).toMatchObject({ isError: false, content: 'Echo: read-only hello' });
    expect(toggle.content).toMatch(
      /^permission denied: mcp__everything__toggle-simulated-logging is not allowed: this session is read-only/,
    );
    expect(ping.content).toMatch(/^permission denied: mcp__plain__ping is not allowed: this session is read-only/);
  });

  it('tool contract: ask offers the tools annotated readOnlyHint and runs them; it offers no other, unannotated ones included', async () => {
    const repl = genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' });
    const detach = [
      attachMcpToolBox(repl.brains.ask, everything, { readOnly: true }),
      attachMcpToolBox(repl.brains.ask, plain, { readOnly: true }),
    ];
    standin().script({ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'asked' } }] }, { text: 'it echoed' });
    const result = await repl.ask({ say: 'echo something' }, contextFor());
    for (const stop of detach) stop();
    const names = offered(standin().requests[0].body);
    expect(names).toEqual(
      expect.arrayContaining(['read', 'glob', 'grep', 'websearch', 'mcp__everything__echo', 'mcp__everything__get-sum']),
    );
    expect(names).not.toContain('mcp__everything__toggle-simulated-logging');
    expect(names).not.toContain('mcp__everything__gzip-file-as-resource');
    expect(names).not.toContain('mcp__plain__ping');
    expect(names).not.toContain('write');
    expect(toolMessages(result.session)[0]).toMatchObject({ isError: false, content: 'Echo: asked' });
    expect(result.output).toBe('it echoed');
  });
});

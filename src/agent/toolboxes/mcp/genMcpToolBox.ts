import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

import { silentLog, type BrainLog } from '../../../core/contract/BrainContext.js';
import type { JsonSchemaObject } from '../../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../../core/contract/errors.js';
import type { BhrainToolBox } from '../../tool/BhrainToolBox.js';
import { defineTool, type BhrainTool, type BhrainToolEffect, type BhrainToolOutput } from '../../tool/defineTool.js';
import { toolBoxOf } from '../../tool/executeTool.js';
import { MCP_KILL_GRACE_MS, McpStdioTransport } from './McpStdioTransport.js';

/** .what = one MCP server as configured: a command to spawn (stdio) or a streamable HTTP endpoint */
export type McpServerConfig =
  | { type?: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { type: 'http'; url: string; headers?: Record<string, string> };

/**
 * .what = a toolbox over one running MCP server; its tools are offered as mcp__<server>__<tool>
 * .why = the ecosystem's standard source of tools, with a lifecycle bhrain owns: close() leaves no process behind
 */
export interface McpToolBox extends BhrainToolBox {
  /** the configured name; tools are offered as mcp__<server>__<tool> */
  readonly server: string;
  /** the stdio server's pid (leader of its own process group); null for http */
  readonly pid: number | null;
  /** calls the listener with a new snapshot (same connection) each time the server's tool list changes */
  onToolsChanged: (listener: (next: McpToolBox) => void) => () => void;
  /** closes the connection; a stdio server is killed with its whole group (SIGTERM, SIGKILL after 2 s) */
  close: () => Promise<void>;
}

/**
 * .what = an MCP server that could not be started or did not answer in time
 * .why = names the server and says why (its stderr tail, or the HTTP error), so the config can be fixed
 */
export class McpServerStartError extends BadRequestError {
  override readonly code = 'MCP_SERVER_START';
  constructor(
    message: string,
    readonly server: string,
  ) {
    super(message);
  }
}

/** how long a server has by default to connect and answer tools/list */
export const MCP_START_TIMEOUT_MS = 30_000;
/** how long one tools/call may take by default before it is a failed result */
export const MCP_CALL_TIMEOUT_MS = 10 * 60_000;
// OpenAI-compatible APIs take at most 64 characters (Anthropic 128): one name must work for every atom
const MAX_TOOL_NAME_CHARS = 64;

// the connection every snapshot of one server shares
interface McpConnection {
  server: string;
  client: Client;
  pid: number | null;
  log: BrainLog;
  callTimeoutMs: number;
  /** why the server cannot be used any more, null while it can */
  gone: () => string | null;
}

/** .what = the model-facing name of an MCP tool: mcp__<server>__<tool>, only [A-Za-z0-9_-], at most 64 chars */
export const toMcpToolName = (server: string, tool: string): string =>
  `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_TOOL_NAME_CHARS);

// a base64 payload's decoded size, without decoding it
const base64Bytes = (data: string): number => {
  const clean = data.replace(/\s/g, '');
  return Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0);
};

/** .what = a tools/call result as the text the model reads: text joined, everything else described, never dropped */
export const formatMcpContent = (result: CallToolResult | { toolResult: unknown }): string => {
  // servers on the 2024-10-07 protocol answer { toolResult } instead of content
  if ('toolResult' in result) return JSON.stringify(result.toolResult) ?? '';
  const parts = (result.content ?? []).map((block): string => {
    switch (block.type) {
      case 'text':
        return block.text;
      case 'image':
      case 'audio':
        return `[${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource && typeof resource.text === 'string') return `[resource ${resource.uri}]\n${resource.text}`;
        const bytes = 'blob' in resource && typeof resource.blob === 'string' ? `, ${base64Bytes(resource.blob)} bytes` : '';
        return `[resource ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}${bytes}, not shown]`;
      }
      case 'resource_link':
        return `[resource link: ${block.name} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? `: ${block.description}` : ''}]`;
      default:
        return `[${(block as { type: string }).type} content, not shown]`;
    }
  });
  // a tool with only structured output still says something
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent, null, 2);
  return parts.join('\n');
};

/**
 * .what = an MCP tool's effect, from the server's annotations: readOnlyHint → read; destructiveHint → unknown;
 *         openWorldHint → network; none → unknown ("may change anything")
 * .why = a server that marks a tool read-only lets readOnly sessions, ask and the read-only subagents offer it; the
 *        hints are the server's word, trusted as the user trusted the server by configuring it
 */
export const effectOfMcpTool = (tool: Pick<Tool, 'annotations'>): BhrainToolEffect | null => {
  const hints = tool.annotations;
  if (hints?.readOnlyHint === true) return 'read';
  if (hints?.destructiveHint === true) return null;
  if (hints?.openWorldHint === true) return 'network';
  return null;
};

/** .what = one MCP tool as a bhrain tool: its input the server's JSON Schema, its effect from its annotations */
const defineMcpTool = (connection: McpConnection, tool: Tool, name: string): BhrainTool =>
  defineTool({
    name,
    description: tool.description || tool.title || `the ${tool.name} tool of the MCP server '${connection.server}'`,
    input: { ...tool.inputSchema, type: 'object' } as JsonSchemaObject,
    effect: effectOfMcpTool(tool),
    execute: async (input, context): Promise<BhrainToolOutput> => {
      const failure = (output: string): BhrainToolOutput => ({ success: false, output });
      const gone = connection.gone();
      if (gone) return failure(gone);
      try {
        const result = await connection.client.callTool({ name: tool.name, arguments: input }, undefined, {
          signal: context.signal,
          timeout: connection.callTimeoutMs,
        });
        const text = formatMcpContent(result as CallToolResult);
        if (result.isError) return failure(text.trim() ? text : `the MCP tool ${tool.name} reported an error without a message`);
        return { success: true, output: text.trim() ? text : `(the MCP tool ${tool.name} returned no content)` };
      } catch (error) {
        // the server may have died during the call: say that, not the transport's "connection closed"
        const goneNow = connection.gone();
        if (goneNow) return failure(goneNow);
        if (context.signal?.aborted) return failure(`${name} was aborted before the MCP server answered`);
        connection.log.warn(`MCP tool ${name} failed`, { server: connection.server, error: String((error as Error)?.message ?? error) });
        return failure(`the MCP tool ${name} failed: ${(error as Error)?.message ?? String(error)}`);
      }
    },
  });

// a snapshot of the server's tools, over the shared connection
const genSnapshot = (
  connection: McpConnection,
  tools: readonly Tool[],
  subscribe: (listener: (next: McpToolBox) => void) => () => void,
  close: () => Promise<void>,
): McpToolBox => {
  const names = new Set<string>();
  const defined = tools.map((tool) => {
    let name = toMcpToolName(connection.server, tool.name);
    // two tools that sanitize to one name both stay callable
    for (let n = 2; names.has(name); n += 1) name = `${name.slice(0, MAX_TOOL_NAME_CHARS - String(n).length - 1)}_${n}`;
    names.add(name);
    return defineMcpTool(connection, tool, name);
  });
  const box = toolBoxOf({ name: `mcp__${connection.server}`, tools: defined });
  return {
    name: box.name,
    server: connection.server,
    pid: connection.pid,
    tools: box.tools,
    get definitions() {
      return box.definitions;
    },
    onToolsChanged: subscribe,
    close,
    execute: box.execute,
  };
};

// every tool, across pages
const listAllTools = async (client: Client, options: { signal?: AbortSignal; timeout?: number } = {}): Promise<Tool[]> => {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, options);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
};

const describeExit = (exit: { code: number | null; signal: NodeJS.Signals | null } | null): string =>
  exit?.signal ? `killed by ${exit.signal}` : `code ${exit?.code ?? 'unknown'}`;

/** .what = how a toolbox talks to its server: the transport, the stdio process (null for http), and how an http session ends */
interface McpTransportOpened {
  transport: Transport;
  stdio: McpStdioTransport | null;
  /** an http server is told the session is over (DELETE), within the kill grace: a server that is gone must not hold close() */
  endHttpSession: () => Promise<void>;
}

/**
 * .what = the transport of one server as configured: a stdio process started with only the safe part of the
 *         environment, or a streamable HTTP connection; a config that cannot work throws `fail`, naming what to fix
 */
const openMcpTransport = async (
  config: McpServerConfig,
  context: { cwd: string; env: Record<string, string | undefined> },
  fail: (why: string) => McpServerStartError,
): Promise<McpTransportOpened> => {
  if (config.type === 'http') {
    let url: URL;
    try {
      url = new URL(config.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(url.protocol);
    } catch {
      throw fail(`its url ${JSON.stringify(config.url)} is not an http(s) URL; set "url" to e.g. "http://127.0.0.1:3001/mcp"`);
    }
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const http = new StreamableHTTPClientTransport(url, { requestInit: { headers: { ...config.headers } } });
    const endHttpSession = async () => {
      if (!http.sessionId) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        http.terminateSession().catch(() => {}),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, MCP_KILL_GRACE_MS))),
      ]);
      clearTimeout(timer);
    };
    return { transport: http, stdio: null, endHttpSession };
  }
  if (typeof config.command !== 'string' || config.command.trim() === '')
    throw fail('its "command" is missing or empty; set "command" (and "args") to the program that runs the server');
  const [{ DEFAULT_INHERITED_ENV_VARS }, { ReadBuffer, serializeMessage }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/shared/stdio.js'),
  ]);
  // only the variables the SDK deems safe (PATH, HOME, …; as its getDefaultEnvironment, but read from the injected env)
  // plus the server's own: bhrain's supplier keys are not the server's business
  const inherited = Object.fromEntries(
    DEFAULT_INHERITED_ENV_VARS.flatMap((key) => {
      const value = context.env[key];
      return value === undefined || value.startsWith('()') ? [] : [[key, value]];
    }),
  );
  const stdio = new McpStdioTransport(
    { command: config.command, args: config.args ?? [], env: { ...inherited, ...config.env }, cwd: config.cwd ?? context.cwd },
    { ReadBuffer, serializeMessage },
  );
  return { transport: stdio, stdio, endHttpSession: async () => {} };
};

/**
 * .what = connects and lists the tools within the start timeout; on any failure the server is closed (a stdio server
 *         killed, group included) and the failure thrown as `fail` says why: it exited, timed out, or could not run
 */
const connectWithin = async (
  input: { client: Client; opened: McpTransportOpened; config: McpServerConfig; startTimeoutMs: number; close: () => Promise<void> },
  context: { signal?: AbortSignal },
  fail: (why: string) => McpServerStartError,
): Promise<Tool[]> => {
  const { client, opened, config, startTimeoutMs } = input;
  const { stdio } = opened;
  const stderrTail = () => (stdio?.stderr ? `: ${stdio.stderr}` : ' (nothing on stderr)');
  const abortStart = new AbortController();
  const onAbort = () => abortStart.abort(context.signal?.reason);
  context.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    if (context.signal?.aborted) throw new Error('aborted');
    const started = (async () => {
      await client.connect(opened.transport, { signal: abortStart.signal, timeout: startTimeoutMs });
      return listAllTools(client, { signal: abortStart.signal, timeout: startTimeoutMs });
    })();
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('start timeout')), startTimeoutMs);
    });
    started.catch(() => {});
    return await Promise.race([started, timedOut]);
  } catch (error) {
    const timedOut = (error as Error)?.message === 'start timeout' || /timed out/i.test(String((error as Error)?.message));
    // how it ended before we killed it, if it did
    const exitedEarly = stdio?.exit ?? null;
    abortStart.abort();
    await input.close();
    if (context.signal?.aborted) throw fail('the run was aborted while it started');
    if (exitedEarly) throw fail(`it exited (${describeExit(exitedEarly)}) before answering${stderrTail()}`);
    if (timedOut)
      throw fail(
        `no answer within ${startTimeoutMs} ms, so it was killed${stdio ? stderrTail() : ''}. Check that it speaks MCP on ${stdio ? 'stdout' : config.type === 'http' ? config.url : 'its transport'}, or raise its start timeout`,
      );
    const message = (error as Error)?.message ?? String(error);
    if (stdio)
      throw fail(
        `could not run ${JSON.stringify((config as { command: string }).command)}: ${message}${stdio.stderr ? `; stderr: ${stdio.stderr}` : ''}. Check "command" and "args"`,
      );
    throw fail(`${(config as { url: string }).url} failed: ${message}. Check "url" and "headers"`);
  } finally {
    clearTimeout(timer);
    context.signal?.removeEventListener('abort', onAbort);
  }
};

/**
 * .what = starts (stdio) or connects to (http) one MCP server and returns a toolbox over its tools
 * .why = resolves only once tools/list answered, so a broken server fails here, by name, with its stderr tail or HTTP
 *        error; a server that dies later gives failed results, never a throw out of execute
 */
export const genMcpToolBox = async (
  input: { name: string; transport: McpServerConfig; startTimeoutMs?: number; callTimeoutMs?: number },
  context: { cwd: string; env: Record<string, string | undefined>; log?: BrainLog; signal?: AbortSignal },
): Promise<McpToolBox> => {
  const server = input.name;
  const log = context.log ?? silentLog;
  const config = input.transport;
  const startTimeoutMs = input.startTimeoutMs ?? MCP_START_TIMEOUT_MS;
  const fail = (why: string): McpServerStartError => new McpServerStartError(`MCP server '${server}' did not start: ${why}`, server);
  // other characters are fine: tool names replace them with _
  if (typeof server !== 'string' || server.trim() === '') throw fail('its name is empty; give every server in the MCP config a name');

  // loaded only when a server is configured, so runs without MCP do not pay for the SDK at start-up
  const [{ Client }, { ToolListChangedNotificationSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const opened = await openMcpTransport(config, context, fail);
  const { stdio } = opened;

  const client = new Client({ name: 'bhrain', version: '1' }, { capabilities: {} });
  let closing = false;
  let closePromise: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing = true;
    closePromise ??= opened
      .endHttpSession()
      .then(() => client.close())
      .catch(() => {})
      .then(() => stdio?.close());
    return closePromise;
  };
  const stderrTail = () => (stdio?.stderr ? `: ${stdio.stderr}` : ' (nothing on stderr)');
  const connection: McpConnection = {
    server,
    client,
    pid: null,
    log,
    callTimeoutMs: input.callTimeoutMs ?? MCP_CALL_TIMEOUT_MS,
    gone: () => {
      if (closing) return `MCP server '${server}' was closed; its tools are unavailable for the rest of this run`;
      if (stdio?.exit)
        return `MCP server '${server}' exited (${describeExit(stdio.exit)})${stderrTail()}; its tools are unavailable for the rest of this run`;
      return null;
    },
  };

  let firstListed: () => void = () => {};
  let startedOk = false;
  const listeners = new Set<(next: McpToolBox) => void>();
  const subscribe = (listener: (next: McpToolBox) => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  // each re-list answers with the list as it is then, applied in order, and only after the first list is in
  let relisting: Promise<unknown> = new Promise<void>((resolve) => (firstListed = resolve));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    relisting = relisting.then(async () => {
      if (connection.gone() || !startedOk) return;
      try {
        const next = genSnapshot(connection, await listAllTools(client), subscribe, close);
        for (const listener of [...listeners]) {
          try {
            listener(next);
          } catch (error) {
            log.error(`a listener of MCP server '${server}' tool changes threw: ${(error as Error)?.message ?? error}`, { server });
          }
        }
      } catch (error) {
        log.warn(`MCP server '${server}' announced new tools, but listing them failed: ${(error as Error)?.message ?? error}`, { server });
      }
    });
  });
  // connect and list within the start timeout; on any failure the server is killed, group included
  const tools = await connectWithin({ client, opened, config, startTimeoutMs, close }, context, fail);
  connection.pid = stdio?.pid ?? null;
  startedOk = true;
  firstListed();

  // a server dying mid-run is reported by each later call (connection.gone); here it is only logged
  client.onclose = () => {
    if (!closing)
      log.warn(`MCP server '${server}' ${stdio?.exit ? `exited (${describeExit(stdio.exit)})` : 'closed its connection'}`, {
        server,
        stderr: stdio?.stderr,
      });
  };
  client.onerror = (error) => log.debug(`MCP server '${server}': ${error?.message ?? error}`, { server });

  log.debug(`MCP server '${server}' started with ${tools.length} tools`, { server, pid: connection.pid });
  return genSnapshot(connection, tools, subscribe, close);
};

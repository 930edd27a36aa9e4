import * as z from 'zod/mini';

import type { McpServerConfig } from '../../agent/toolboxes/mcp/genMcpToolBox.js';

const STDIO_KEYS = ['type', 'command', 'args', 'env'] as const;
const HTTP_KEYS = ['type', 'url', 'headers'] as const;

/** .what = a server name as Claude Code allows it; it becomes part of every tool name (`mcp__<server>__<tool>`) */
const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

/** .what = one issue of an mcpServers value: its key path (under mcpServers) and what is wrong, as a sentence */
export interface McpServersIssue {
  path: Array<string | number>;
  message: string;
}

/**
 * .what = an `mcpServers` value checked key by key, as Claude Code's `.mcp.json` has it: each server
 *         `{command, args?, env?}` (type stdio, optional) or `{type: "http", url, headers?}`, nothing else
 * .why = one check for `.mcp.json`, `--mcp-config` files and the settings files, whose issues each caller words with
 *        its file; a typo is an error, never a server silently left out
 */
export const checkMcpServers = (value: unknown): { servers: Record<string, McpServerConfig>; issues: McpServersIssue[] } => {
  const issues: McpServersIssue[] = [];
  const servers: Record<string, McpServerConfig> = {};
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return {
      servers,
      issues: [
        {
          path: [],
          message:
            'expected an object of servers by name, e.g. {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}',
        },
      ],
    };
  for (const [name, server] of Object.entries(value)) {
    if (!SERVER_NAME.test(name)) {
      issues.push({
        path: [name],
        message: `the server name may hold only letters, digits, _ and - (it is part of the tool names mcp__${name}__<tool>): rename it`,
      });
      continue;
    }
    if (!server || typeof server !== 'object' || Array.isArray(server)) {
      issues.push({
        path: [name],
        message: 'expected a server: {"command": "...", "args": [...], "env": {...}} or {"type": "http", "url": "...", "headers": {...}}',
      });
      continue;
    }
    const fields = server as Record<string, unknown>;
    const type = fields.type ?? 'stdio';
    if (type !== 'stdio' && type !== 'http') {
      issues.push({
        path: [name, 'type'],
        message: `expected "stdio" or "http", got ${JSON.stringify(type)}${type === 'sse' ? ' (the SSE transport is deprecated: use the server\'s streamable HTTP endpoint with "type": "http")' : ''}`,
      });
      continue;
    }
    const keys = type === 'http' ? HTTP_KEYS : STDIO_KEYS;
    for (const key of Object.keys(fields))
      if (!(keys as readonly string[]).includes(key))
        issues.push({ path: [name, key], message: `unknown key for a ${type} server: valid keys are ${keys.join(', ')}` });
    const check = (key: string, schema: z.ZodMiniType, expects: string, required = false) => {
      if (fields[key] === undefined && !required) return;
      if (!schema.safeParse(fields[key]).success)
        issues.push({ path: [name, key], message: `expected ${expects}, got ${JSON.stringify(fields[key]) ?? 'nothing'}` });
    };
    if (type === 'http') {
      check('url', z.string().check(z.minLength(1)), 'the server\'s URL, e.g. "https://mcp.example.com/mcp"', true);
      check('headers', z.record(z.string(), z.string()), 'an object of header strings, e.g. {"Authorization": "Bearer ${TOKEN}"}');
      servers[name] = {
        type: 'http',
        url: fields.url as string,
        ...(fields.headers ? { headers: fields.headers as Record<string, string> } : {}),
      };
    } else {
      check('command', z.string().check(z.minLength(1)), 'the command that starts the server, e.g. "npx"', true);
      check('args', z.array(z.string()), 'a list of strings');
      check('env', z.record(z.string(), z.string()), 'an object of string values, e.g. {"TOKEN": "${TOKEN}"}');
      servers[name] = {
        type: 'stdio',
        command: fields.command as string,
        ...(fields.args ? { args: fields.args as string[] } : {}),
        ...(fields.env ? { env: fields.env as Record<string, string> } : {}),
      };
    }
  }
  return { servers, issues };
};

import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { findRepoRoot } from '../../agent/git/findRepoRoot.js';
import type { McpServerConfig } from '../../agent/toolboxes/mcp/genMcpToolBox.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { McpServersIssue } from './checkMcpServers.js';
import { PROJECT_CONFIG_PATHS } from '../../sandbox/protectedPaths.js';

/** .what = the name of the project's MCP servers file, at the repository root (Claude Code's) */
export const MCP_JSON_FILE_NAME = PROJECT_CONFIG_PATHS.mcpServers;

/** .what = a key path under mcpServers as a user writes it: `mcpServers.github.args[1]` */
const formatPath = (path: Array<string | number>): string =>
  ['mcpServers', ...path].map((part, index) => (typeof part === 'number' ? `[${part}]` : index ? `.${part}` : part)).join('');

/** .what = the issues of an mcpServers value, one line each, naming the file and the key */
export const formatMcpServersIssues = (issues: McpServersIssue[], file: string): string =>
  issues.map((issue) => `bad value for '${formatPath(issue.path)}' in ${file}: ${issue.message}`).join('\n');

/**
 * .what = an MCP config file (`.mcp.json`, or a --mcp-config file) read and validated; null when optional and absent
 * .why = a file that exists is never half-used: bad JSON or a bad key is a BadRequestError (exit 2) naming the file
 *        and the key
 */
export const readMcpConfigFile = async (input: {
  path: string;
  shownAs: string;
  optional: boolean;
}): Promise<Record<string, McpServerConfig> | null> => {
  const text = await readFile(input.path, 'utf8').catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' && input.optional) return null;
    throw new BadRequestError(
      `${input.shownAs}: cannot read the MCP config file (${error.code ?? error.message}); give a JSON file {"mcpServers": {...}}`,
    );
  });
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`invalid JSON in the MCP config file ${input.path}: ${(error as Error).message}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new BadRequestError(`the MCP config file ${input.path} must hold an object {"mcpServers": {...}}`);
  const unknown = Object.keys(json).filter((key) => key !== 'mcpServers');
  if (unknown.length)
    throw new BadRequestError(`unknown key '${unknown[0]}' in the MCP config file ${input.path}: the only valid key is mcpServers`);
  const { servers, issues } = (await import('./checkMcpServers.js')).checkMcpServers((json as { mcpServers?: unknown }).mcpServers ?? {});
  if (issues.length) throw new BadRequestError(formatMcpServersIssues(issues, input.path));
  return servers;
};

/**
 * .what = `${VAR}` and `${VAR:-default}` expanded in a string, as Claude Code expands `.mcp.json`; the names of
 *         variables that are unset and have no default
 */
const expandString = (text: string, env: Record<string, string | undefined>, missing: Set<string>): string =>
  text.replace(/\$\{([^}:]+)(?::-([^}]*))?\}/g, (whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback;
    missing.add(name);
    return whole;
  });

/**
 * .what = a server's command, args, env, url and headers with `${VAR}` / `${VAR:-default}` expanded from the environment
 * .why = secrets stay out of checked-in files; a variable that is unset and has no default is an error naming the
 *        server, its file and the variables, never a server started with a literal `${TOKEN}`
 */
export const expandMcpServer = (
  input: { name: string; server: McpServerConfig; from: string },
  context: { env: Record<string, string | undefined> },
): McpServerConfig => {
  const missing = new Set<string>();
  const expand = (text: string) => expandString(text, context.env, missing);
  const expandMap = (map: Record<string, string> | undefined) =>
    map ? Object.fromEntries(Object.entries(map).map(([key, value]) => [key, expand(value)])) : undefined;
  const { server } = input;
  const expanded: McpServerConfig =
    server.type === 'http'
      ? { type: 'http', url: expand(server.url), ...(server.headers ? { headers: expandMap(server.headers) } : {}) }
      : {
          type: 'stdio',
          command: expand(server.command),
          ...(server.args ? { args: server.args.map(expand) } : {}),
          ...(server.env ? { env: expandMap(server.env) } : {}),
        };
  if (missing.size)
    throw new BadRequestError(
      `MCP server '${input.name}' (${input.from}) uses unset environment variables: ${[...missing].join(', ')}. Set them, or give a default as \${NAME:-value}`,
    );
  return expanded;
};

/** .what = where an MCP server's definition came from; project sources need the user's approval before they start */
export interface McpServerSource {
  kind: 'flag' | 'mcp.json' | 'project' | 'user';
  /** the file, as shown to the user */
  path: string;
}

/** .what = an MCP server to start: its name, its definition (variables expanded), and where it was defined */
export interface McpServerToStart {
  name: string;
  transport: McpServerConfig;
  source: McpServerSource;
}

/**
 * .what = the user's approval of project MCP servers: the project approved as a whole (resolveProjectApproval: by
 *         --trust-project or trustedProjects), or by Claude Code's keys of the user settings file
 */
export interface McpProjectApproval {
  trusted: boolean;
  enableAllProjectMcpServers: boolean;
  enabledMcpjsonServers: readonly string[];
}

/**
 * .what = the MCP servers a run starts, from every source, lowest first: the user settings, the project settings
 *         (farthest first), the repository's `.mcp.json`, then each --mcp-config file in order; a later source's
 *         server of the same name wins. With strict, only the --mcp-config files
 * .why = servers from the project run arbitrary commands outside the sandbox, so they start only when the user settings
 *        approve them (enableAllProjectMcpServers, or enabledMcpjsonServers naming them) or their file is passed with
 *        --mcp-config; a skipped one is named in `skipped`, with how to approve it; `configured` names them all
 */
export const resolveMcpServers = async (
  input: {
    cwd: string;
    configFiles: readonly string[];
    strict: boolean;
    /** the mcpServers of each settings file, user first, then the project files farthest first */
    settings: ReadonlyArray<{ layer: 'user' | 'project'; path: string; servers: Record<string, McpServerConfig> }>;
    approval: McpProjectApproval;
    userSettingsPath: string;
  },
  context: { env: Record<string, string | undefined> },
): Promise<{ servers: McpServerToStart[]; skipped: string[]; configured: string[] }> => {
  const layers: Array<{ source: McpServerSource; servers: Record<string, McpServerConfig> }> = [];
  if (!input.strict) {
    for (const each of input.settings) layers.push({ source: { kind: each.layer, path: each.path }, servers: each.servers });
    const mcpJson = join((await findRepoRoot({ cwd: input.cwd })) ?? resolve(input.cwd), MCP_JSON_FILE_NAME);
    const servers = await readMcpConfigFile({ path: mcpJson, shownAs: mcpJson, optional: true });
    if (servers) layers.push({ source: { kind: 'mcp.json', path: mcpJson }, servers });
  }
  for (const file of input.configFiles) {
    const path = resolve(input.cwd, file);
    const servers = await readMcpConfigFile({ path, shownAs: `--mcp-config ${file}`, optional: false });
    layers.push({ source: { kind: 'flag', path }, servers: servers! });
  }
  const winners = new Map<string, { server: McpServerConfig; source: McpServerSource }>();
  for (const layer of layers)
    for (const [name, server] of Object.entries(layer.servers)) winners.set(name, { server, source: layer.source });

  const servers: McpServerToStart[] = [];
  const skipped: string[] = [];
  for (const [name, { server, source }] of winners) {
    const fromProject = source.kind === 'mcp.json' || source.kind === 'project';
    const approved =
      input.approval.trusted || input.approval.enableAllProjectMcpServers || input.approval.enabledMcpjsonServers.includes(name);
    if (fromProject && !approved) {
      skipped.push(
        `MCP server '${name}' from ${source.path} was not started: project servers run commands outside the sandbox, so they need your approval. Add "enabledMcpjsonServers": ["${name}"] (or "enableAllProjectMcpServers": true) to ${input.userSettingsPath}, approve the whole project (--trust-project, or "trustedProjects" there), or pass the file with --mcp-config`,
      );
      continue;
    }
    servers.push({ name, transport: expandMcpServer({ name, server, from: source.path }, context), source });
  }
  // every server a source names, started or not: what a permission rule may name (checkRuleTools)
  return { servers, skipped, configured: [...winners.keys()] };
};

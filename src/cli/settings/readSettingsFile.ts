import { readFile } from 'node:fs/promises';

import type * as Zod from 'zod';

import { MAX_ITERATIONS_LIMIT } from '../../agent/constants.js';
import { genRulesGuard, type BhrainPermissionRules } from '../../agent/permission/genRulesGuard.js';
import { BASH_SANDBOX_MODES, type BashSandboxMode } from '../../sandbox/BashSandbox.js';
import { checkDomainPattern, DOMAIN_PATTERN_EXPECTS } from '../../sandbox/network/allowedDomains.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { checkMcpServers } from '../mcp/resolveMcpServers.js';
import {
  BUILTIN_GUARD_NAMES,
  isHttpUrl,
  MEMORY_STRATEGIES,
  parseDurationMs,
  SETTING_KEYS,
  SETTINGS_FILE_TOP_KEYS,
  SETTINGS_SUPPLIERS,
  type SettingKey,
} from './SkillSettings.js';

/**
 * .what = why a string is not an atom slug bhrain knows (the choices listed), or null when it is one
 * .why = the atom is checked where it is given (a file, an env var), so the error names that place
 */
export const checkAtomSlug = async (slug: string): Promise<string | null> => {
  // loaded only now: it brings the suppliers' SDKs
  const { genBrainAtom } = await import('../../providers/genBrainAtom.js');
  try {
    genBrainAtom({ slug });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
};

const RULE_KINDS = ['allow', 'prompt', 'deny'] as const;

/**
 * .what = the settings-file keys that are not run settings: MCP servers, and the user's approval of a project (its MCP
 *         servers, or all it loosens); the approval keys are read from the user's file only
 */
export const MCP_SETTINGS_KEYS = ['mcpServers', 'enableAllProjectMcpServers', 'enabledMcpjsonServers'] as const;
export const APPROVAL_KEYS = ['trustedProjects', 'enableAllProjectMcpServers', 'enabledMcpjsonServers'] as const;

/**
 * .what = the shape of a settings file: every key optional, no other key allowed; built on first use
 * .why = a typo (`atomm`) or a bad value is an error, never silently ignored. zod is imported, and the schema built, on
 *        the first file read (~20 ms): a run without a settings file never pays it
 */
const genSettingsFileSchema = (z: typeof Zod) => {
  /** inline permission rules: each rule is parsed as the rules file's are, so a bad one is reported at load */
  const rulesSchema = z
    .strictObject({ allow: z.array(z.string()).optional(), prompt: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
    .superRefine((rules, ctx) => {
      for (const kind of RULE_KINDS)
        (rules[kind] ?? []).forEach((rule, index) => {
          try {
            genRulesGuard({ [kind]: [rule] });
          } catch (error) {
            ctx.addIssue({ code: 'custom', message: (error as Error).message, path: [kind, index], params: { explained: true } });
          }
        });
    });

  /** a guard name when a string, inline rules when an object: each checked on its own, so the error fits the form given */
  const permissionSchema = z.unknown().transform((value, ctx): string | BhrainPermissionRules => {
    const parsed = (typeof value === 'string' ? z.enum(BUILTIN_GUARD_NAMES) : rulesSchema).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  });

  const urlSchema = z.string().refine(isHttpUrl);

  /** a domain pattern, each bad one worded by checkDomainPattern */
  const domainPatternSchema = z.string().superRefine((pattern, ctx) => {
    const wrong = checkDomainPattern(pattern);
    if (wrong) ctx.addIssue({ code: 'custom', message: wrong, params: { explained: true } });
  });

  /** a path to hide: absolute or from ~/, never / itself (it would hide bash and everything else) */
  const denyReadSchema = z.array(
    z.string().superRefine((path, ctx) => {
      const ok = path === '~' || path.startsWith('~/') || (path.startsWith('/') && path.replace(/\/+$/, '') !== '');
      if (!ok)
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(path)} is not a path to hide: give one that starts with / or ~/ (and is not / itself), e.g. "~/.config/op"`,
          params: { explained: true },
        });
    }),
  );

  /** a mode when a string, `{ mode, denyRead }` when an object: each checked on its own, so the error fits the form given */
  const sandboxSchema = z.unknown().transform((value, ctx): { mode?: BashSandboxMode; denyRead?: string[] } => {
    const parsed =
      typeof value === 'string'
        ? z
            .enum(BASH_SANDBOX_MODES)
            .transform((mode) => ({ mode }))
            .safeParse(value)
        : z.strictObject({ mode: z.enum(BASH_SANDBOX_MODES).optional(), denyRead: denyReadSchema.optional() }).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  });

  /** MCP servers in Claude Code's `.mcp.json` shape, each issue worded by checkMcpServers */
  const mcpServersSchema = z.unknown().transform((value, ctx) => {
    const { servers, issues } = checkMcpServers(value, z);
    for (const issue of issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path, params: { explained: true } });
    return servers;
  });

  return z.strictObject({
    atom: z.string().min(1).optional(),
    model: z.string().regex(/^\S+$/).optional(),
    baseUrl: z.strictObject({ claude: urlSchema.optional(), qwen: urlSchema.optional() }).optional(),
    permission: permissionSchema.optional(),
    sandbox: sandboxSchema.optional(),
    allowNetwork: z.boolean().optional(),
    network: z.strictObject({ allowedDomains: z.array(domainPatternSchema).optional() }).optional(),
    maxIterations: z.int().min(1).max(MAX_ITERATIONS_LIMIT).optional(),
    memory: z.enum(MEMORY_STRATEGIES).optional(),
    timeoutMs: z.int().min(1).optional(),
    maxBudgetUsd: z.number().positive().optional(),
    maxTokens: z.int().min(1).optional(),
    maxWallTime: z
      .union([z.int().min(1), z.string().refine((value) => parseDurationMs(value) !== null)])
      .transform((value) => (typeof value === 'number' ? value : parseDurationMs(value)!))
      .optional(),
    projectInstructions: z.boolean().optional(),
    appendSystemPrompt: z.string().optional(),
    mcpServers: mcpServersSchema.optional(),
    enableAllProjectMcpServers: z.boolean().optional(),
    enabledMcpjsonServers: z.array(z.string()).optional(),
    trustedProjects: z.array(z.string().min(1)).optional(),
  });
};
let settingsFileSchema: ReturnType<typeof genSettingsFileSchema> | null = null;

/** .what = a settings file's content once validated (maxWallTime in milliseconds) */
export type SettingsFile = Zod.output<ReturnType<typeof genSettingsFileSchema>>;

/** .what = the keys an object at a path of the settings file may have, for an "unknown key" message */
const validKeysAt = (path: readonly PropertyKey[]): readonly string[] => {
  if (path.length === 0) return [...SETTINGS_FILE_TOP_KEYS, ...MCP_SETTINGS_KEYS, 'trustedProjects'];
  if (path[0] === 'baseUrl') return SETTINGS_SUPPLIERS;
  if (path[0] === 'network') return ['allowedDomains'];
  if (path[0] === 'sandbox') return ['mode', 'denyRead'];
  if (path[0] === 'permission') return RULE_KINDS;
  return [];
};

/** .what = what the value at a path of the settings file must be, for a "bad value" message */
const expectsAt = (path: readonly PropertyKey[]): string => {
  if (path[0] === 'baseUrl' && path.length > 1) return 'an http(s) URL, e.g. "http://localhost:8000/v1"';
  if (path[0] === 'permission' && path.length === 2) return 'a list of rule strings, e.g. ["bash(npm test*)", "write(src/**)"]';
  if (path[0] === 'permission' && path.length > 2) return 'a rule string, e.g. "bash(npm test*)" or "write(src/**)"';
  if (path[0] === 'network' && path.length === 1) return 'an object, e.g. {"allowedDomains": ["registry.npmjs.org"]}';
  if (path[0] === 'network' && path.length === 2) return SETTING_KEYS.allowedDomains.expects;
  if (path[0] === 'network') return DOMAIN_PATTERN_EXPECTS;
  if (path[0] === 'sandbox' && path[1] === 'mode') return `one of ${BASH_SANDBOX_MODES.join(', ')}`;
  if (path[0] === 'sandbox' && path[1] === 'denyRead')
    return path.length > 2 ? 'a path, absolute or starting with ~/' : SETTING_KEYS.denyRead.expects;
  if (path[0] === 'enableAllProjectMcpServers') return 'true or false';
  if (path[0] === 'enabledMcpjsonServers') return 'a list of MCP server names, e.g. ["github"]';
  if (path[0] === 'trustedProjects') return 'a list of repository roots, e.g. ["~/src/my-app"]';
  return SETTING_KEYS[path[0] as SettingKey]?.expects ?? 'a valid value';
};

/** .what = which layer a settings file is: the project's (.bhrain/settings.json) or the user's (the bhrain config dir) */
export type SettingsLayer = 'project' | 'user';

/** .what = a key path as a user writes it: `permission.allow[2]` */
const formatPath = (path: readonly PropertyKey[]): string =>
  path.map((part, index) => (typeof part === 'number' ? `[${part}]` : index ? `.${String(part)}` : String(part))).join('');

/** .what = the value at a path of the parsed JSON, as JSON (what the user wrote) */
const shownAt = (json: unknown, path: readonly PropertyKey[]): string => {
  const value = path.reduce<unknown>(
    (at, part) => (at && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[part] : undefined),
    json,
  );
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** .what = the edit distance of two short strings, for a "did you mean" */
const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
};

/** .what = one zod issue as a sentence naming the key path, the file and what is valid */
const formatIssue = (issue: Zod.core.$ZodIssue, input: { path: string; json: unknown }): string[] => {
  if (issue.code === 'unrecognized_keys') {
    const valid = validKeysAt(issue.path);
    return issue.keys.map((key) => {
      const near = valid.find((each) => distance(each, key) <= 2);
      return `unknown key '${formatPath([...issue.path, key])}' in ${input.path}: ${near ? `did you mean '${near}'? ` : ''}valid keys are ${valid.join(', ')}`;
    });
  }
  const explained = issue.code === 'custom' && (issue.params as { explained?: boolean } | undefined)?.explained;
  const why = explained ? issue.message : `expected ${expectsAt(issue.path)}, got ${shownAt(input.json, issue.path)}`;
  return [`bad value for '${formatPath(issue.path)}' in ${input.path}: ${why}`];
};

/** .what = where JSON.parse stopped, as line and column, from its message (Node 20 gives a position, 22 also a line) */
const locateJsonError = (text: string, message: string): string => {
  const position = Number(/at position (\d+)/.exec(message)?.[1] ?? text.length);
  const before = text.slice(0, position).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
};

/**
 * .what = a settings file read and validated; null when there is no file at the path
 * .why = a file that exists is never half-used: bad JSON, an unknown key or a bad value is a BadRequestError (exit 2)
 *        naming the file, the key path and the valid choices. A project file may not set baseUrl: a repository
 *        could otherwise send the user's API key to a server of its choosing
 */
export const readSettingsFile = async (input: { path: string; layer: SettingsLayer }): Promise<SettingsFile | null> => {
  const text = await readFile(input.path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new BadRequestError(`cannot read the settings file ${input.path} (${error.code ?? error.message}): fix or remove it`);
  });
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    throw new BadRequestError(`invalid JSON in ${input.path} at ${locateJsonError(text, message)}: ${message}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new BadRequestError(
      `${input.path} must hold a JSON object of settings, e.g. {"atom": "qwen"}; valid keys are ${SETTINGS_FILE_TOP_KEYS.join(', ')}`,
    );
  const parsed = (settingsFileSchema ??= genSettingsFileSchema(await import('zod'))).safeParse(json);
  if (!parsed.success)
    throw new BadRequestError(parsed.error.issues.flatMap((issue) => formatIssue(issue, { path: input.path, json })).join('; '));
  const settings = parsed.data;
  if (input.layer === 'project' && settings.baseUrl)
    throw new BadRequestError(
      `baseUrl is not allowed in a project settings file (${input.path}): a repository could send your API key to a server of its choosing. Set it in your user settings file, with ANTHROPIC_BASE_URL / QWEN_BASE_URL, or with --base-url`,
    );
  const approval = APPROVAL_KEYS.find((key) => settings[key] !== undefined);
  if (input.layer === 'project' && approval)
    throw new BadRequestError(
      `${approval} is not allowed in a project settings file (${input.path}): a repository cannot approve itself (its MCP servers run commands outside the sandbox, and its settings could loosen bhrain's confinement). Set it in your user settings file, or pass --trust-project`,
    );
  if (settings.atom !== undefined) {
    const wrong = await checkAtomSlug(settings.atom);
    if (wrong) throw new BadRequestError(`bad value for 'atom' in ${input.path}: ${wrong}`);
  }
  return settings;
};

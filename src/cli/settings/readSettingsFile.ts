import { readFile } from 'node:fs/promises';

import type * as z from 'zod/mini';

import type { BashSandboxMode } from '../../sandbox/BashSandbox.js';
import { BASH_SANDBOX_MODES } from '../../sandbox/BashSandbox.js';
import { DOMAIN_PATTERN_EXPECTS } from '../../sandbox/network/allowedDomains.js';
import { SUPPLIER_TABLE, SUPPLIER_URL_ENV_VARS_TEXT } from '../../core/contract/supplierTable.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { didYouMean } from '../../core/text/findNearestName.js';
import {
  SETTINGS_FILE_TOP_KEYS,
  type SettingKey,
  FILE_SETTINGS,
  RULE_KINDS,
  SETTINGS,
  SETTINGS_SUPPLIERS,
  type SettingRow,
  type SettingRuleValue,
} from './settingsTable.js';

/** .what = whether a slug is `<repo>/<...>` under a repo that is none of our slug prefixes: a rhachet brain atom's full slug */
export const isRhachetAtomSlug = (slug: string): boolean =>
  /^[^/\s]+\/\S+$/.test(slug) && !SUPPLIER_TABLE.some((row) => slug.startsWith(`${row.slugPrefix}/`));

/**
 * .what = why a string is not an atom slug bhrain knows (the choices listed), or null when it is one
 * .why = the atom is checked where it is given (a file, an env var), so the error names that place
 */
export const checkAtomSlug = async (slug: string): Promise<string | null> => {
  // `<repo>/<...>` under a prefix not ours names a rhachet brain atom: found (or refused, exit 2) when the run starts
  if (isRhachetAtomSlug(slug)) return null;
  // loaded only now: it brings the suppliers' SDKs
  const { genBrainAtom } = await import('../../providers/genBrainAtom.js');
  try {
    genBrainAtom({ slug });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
};

/** .what = the settings-file keys that the user's approval of a project is made of: read from the user's file only */
export const APPROVAL_KEYS = ['trustedProjects', 'enableAllProjectMcpServers', 'enabledMcpjsonServers'] as const;

/** .what = every row of the settings table: the run settings, then the file-only keys */
const FILE_ROWS = [...Object.values(SETTINGS), ...Object.values(FILE_SETTINGS)] as SettingRow[];

/** .what = the top-level keys of a settings file, in the table's order */
const FILE_TOP_KEYS = [...new Set(FILE_ROWS.map((row) => row.fileKey.split('.')[0]))];

/** .what = the keys of the object at a key (`sandbox`, `sandbox.env`): `mode` for a top-level key's own value, then the next part of its nested rows' */
const nestedKeysOf = (key: string): string[] => [
  ...(!key.includes('.') && FILE_ROWS.some((row) => row.fileKey === key) ? ['mode'] : []),
  ...new Set(FILE_ROWS.filter((row) => row.fileKey.startsWith(`${key}.`)).map((row) => row.fileKey.slice(key.length + 1).split('.')[0])),
];

/** .what = the settings-file schema, made from the table on the first file read (settingsFileSchema.ts loads zod/mini) */
let settingsFileSchema: z.ZodMiniType | null = null;
/** .what = settingsFileSchema.ts, once loaded: it words the messages about `hooks` */
let schemaModule: typeof import('./settingsFileSchema.js') | null = null;

/** .what = a row's value type */
type RowValue<TRow> = TRow extends SettingRow<infer TRule, infer _TDefault> ? SettingRuleValue<TRule> : never;

/** .what = a settings file's content once validated (maxWallTime in milliseconds; sandbox as { mode, denyRead, allowUnixSockets, env: { pass, mask } }) */
export type SettingsFile = {
  [K in Exclude<SettingKey, 'sandbox' | 'denyRead' | 'allowUnixSockets' | 'allowedDomains' | 'maskEnv' | 'passEnv'>]?: RowValue<
    (typeof SETTINGS)[K]
  >;
} & {
  [K in keyof typeof FILE_SETTINGS]?: RowValue<(typeof FILE_SETTINGS)[K]>;
} & {
  sandbox?: {
    mode?: BashSandboxMode;
    denyRead?: string[];
    allowUnixSockets?: string[];
    env?: { pass?: string[]; mask?: Record<string, string[]> };
  };
  network?: { allowedDomains?: string[] };
};

/** .what = the keys an object at a path of the settings file may have, for an "unknown key" message */
const validKeysAt = (path: readonly PropertyKey[]): readonly string[] => {
  if (path.length === 0) return FILE_TOP_KEYS;
  if (path[0] === 'baseUrl') return SETTINGS_SUPPLIERS;
  if (path[0] === 'permission') return RULE_KINDS;
  if (path[0] === 'hooks' && schemaModule) return schemaModule.hookKeysAt(path);
  return path.every((part) => typeof part === 'string') ? nestedKeysOf(path.join('.')) : [];
};

/** .what = what the value at a path of the settings file must be, for a "bad value" message */
const expectsAt = (path: readonly PropertyKey[]): string => {
  if (path[0] === 'baseUrl' && path.length > 1) return 'an http(s) URL, e.g. "http://localhost:8000/v1"';
  if (path[0] === 'permission' && path.length === 2) return 'a list of rule strings, e.g. ["bash(npm test*)", "write(src/**)"]';
  if (path[0] === 'permission' && path.length > 2) return 'a rule string, e.g. "bash(npm test*)" or "write(src/**)"';
  if (path[0] === 'network' && path.length === 1) return 'an object, e.g. {"allowedDomains": ["registry.npmjs.org"]}';
  if (path[0] === 'network' && path.length === 2) return SETTINGS.allowedDomains.expects;
  if (path[0] === 'network') return DOMAIN_PATTERN_EXPECTS;
  const hooks = path[0] === 'hooks' && path.length > 1 ? schemaModule?.hookExpectsAt(path) : null;
  if (hooks) return hooks;
  if (path[0] === 'sandbox' && path[1] === 'mode') return `one of ${BASH_SANDBOX_MODES.join(', ')}`;
  if (path[0] === 'sandbox' && path[1] === 'env' && path[2] === 'mask')
    return [SETTINGS.maskEnv.expects, 'a list of domain patterns, e.g. ["api.github.com", "github.com"]', DOMAIN_PATTERN_EXPECTS][
      Math.min(path.length, 5) - 3
    ];
  if (path[0] === 'sandbox' && path[1] === 'denyRead')
    return path.length > 2 ? 'a path, absolute or starting with ~/' : SETTINGS.denyRead.expects;
  // a nested row's own (sandbox.env.pass), an object of nested rows (sandbox.env), else the top-level row's
  const key = path.filter((part) => typeof part === 'string').join('.');
  const row = FILE_ROWS.find((each) => each.fileKey === key && key.includes('.'));
  if (row) return row.expects;
  if (key.includes('.') && nestedKeysOf(key).length) return `an object with the keys ${nestedKeysOf(key).join(', ')}`;
  return FILE_ROWS.find((each) => each.fileKey === path[0])?.expects ?? 'a valid value';
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

/** .what = one zod issue as a sentence naming the key path, the file and what is valid */
const formatIssue = (issue: z.core.$ZodIssue, input: { path: string; json: unknown }): string[] => {
  if (issue.code === 'unrecognized_keys') {
    const valid = validKeysAt(issue.path);
    return issue.keys.map((key) => {
      return `unknown key '${formatPath([...issue.path, key])}' in ${input.path}: ${didYouMean(key, valid)}valid keys are ${valid.join(', ')}`;
    });
  }
  const explained = issue.code === 'custom' && (issue.params as { explained?: boolean } | undefined)?.explained;
  const why = explained ? issue.message : `expected ${expectsAt(issue.path)}, got ${shownAt(input.json, issue.path)}`;
  return [`bad value for '${formatPath(issue.path)}' in ${input.path}: ${why}`];
};

/** .what = where JSON.parse stopped, as line and column, from the position its message gives */
const locateJsonError = (text: string, message: string): string => {
  const position = Number(/at position (\d+)/.exec(message)?.[1] ?? text.length);
  const before = text.slice(0, position).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
};

/**
 * .what = a settings file read and validated; null when there is no file at the path
 * .why = a file that exists is never half-used: bad JSON, an unknown key or a bad value is a BadRequestError (exit 2)
 *        naming the file, the key path and the valid choices. A project file may not set baseUrl: a repository
 *        could otherwise send the user's API key to a server of its choosing; nor store: its conversations
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
  schemaModule ??= await import('./settingsFileSchema.js');
  settingsFileSchema ??= schemaModule.genSettingsFileSchema();
  const parsed = settingsFileSchema.safeParse(json);
  if (!parsed.success)
    throw new BadRequestError(parsed.error.issues.flatMap((issue) => formatIssue(issue, { path: input.path, json })).join('; '));
  const settings = parsed.data as SettingsFile;
  if (input.layer === 'project' && settings.baseUrl)
    throw new BadRequestError(
      `baseUrl is not allowed in a project settings file (${input.path}): a repository could send your API key to a server of its choosing. Set it in your user settings file, with ${SUPPLIER_URL_ENV_VARS_TEXT}, or with --base-url`,
    );
  if (input.layer === 'project' && settings.store !== undefined)
    throw new BadRequestError(
      `store is not allowed in a project settings file (${input.path}): a repository could send your conversations to a bucket of its choosing. Set it in your user settings file, with BHRAIN_STORE, or with --store`,
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

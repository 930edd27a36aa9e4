import { BHRAIN_CONFIG_BOUNDS, DEFAULT_BASH_SANDBOX_MODE, DEFAULT_MAX_ITERATIONS } from '../../agent/constants.js';
import type { Command } from 'commander';
import { resolve } from 'node:path';

import type { BhrainPermissionRules } from '../../agent/permission/genRulesGuard.js';
import { BASH_SANDBOX_MODES } from '../../sandbox/BashSandbox.js';
import { checkDomainPattern, DOMAIN_PATTERN_EXPECTS } from '../../sandbox/network/allowedDomains.js';
import { checkEnvMask } from '../../sandbox/network/genMaskedCredentials.js';
import { checkPassedEnvName } from '../../sandbox/commandEnv.js';
import type { McpServerConfig } from '../../agent/toolboxes/mcp/genMcpToolBox.js';
import type { HooksSettings } from '../hooks/HooksSettings.js';
import {
  credentialEnvVarsOf,
  SUPPLIER_TABLE,
  SUPPLIER_URL_ENV_VARS_TEXT,
  type SupplierSlugPrefix,
} from '../../core/contract/supplierTable.js';

/** .what = the memory strategies a run can use, by the name --memory and the settings file give them */
export const MEMORY_STRATEGIES = ['summarize-on-limit', 'truncate'] as const;
export type MemoryStrategy = (typeof MEMORY_STRATEGIES)[number];

/** .what = the builtin permission guards, by the name --permission and the settings file give them */
export const BUILTIN_GUARD_NAMES = ['allowAll', 'readOnly', 'promptForWrites'] as const;

/** .what = the suppliers a settings file may give a base URL for: the first part of an atom slug */
export const SETTINGS_SUPPLIERS: readonly SupplierSlugPrefix[] = SUPPLIER_TABLE.map((row) => row.slugPrefix);
export type SettingsSupplier = SupplierSlugPrefix;

/** .what = the env var each supplier's atom reads its endpoint from */
export const BASE_URL_ENV_VARS = Object.fromEntries(SUPPLIER_TABLE.map((row) => [row.slugPrefix, row.urlEnvVar])) as Record<
  SettingsSupplier,
  string
>;

/** .what = the env vars each supplier's atom reads its key from, in order of preference (a bearer token first) */
export const KEY_ENV_VARS = Object.fromEntries(SUPPLIER_TABLE.map((row) => [row.slugPrefix, credentialEnvVarsOf(row)])) as Record<
  SettingsSupplier,
  readonly string[]
>;

/** .what = the kinds of rule in a rules file and in inline rules */
export const RULE_KINDS = ['allow', 'prompt', 'deny'] as const;

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** .what = a duration (`90s`, `10m`, `1h`, `1500ms`, or a bare number of milliseconds) in milliseconds; null when it is not one */
export const parseDurationMs = (value: string): number | null => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const ms = match ? Number(match[1]) * DURATION_UNITS_MS[match[2] ?? 'ms'] : NaN;
  return ms >= 1 ? ms : null;
};

/** .what = whether a string is an http(s) URL */
export const isHttpUrl = (value: string): boolean => {
  try {
    return ['http:', 'https:'].includes(new URL(value.trim()).protocol);
  } catch {
    return false;
  }
};

/**
 * .what = what a setting's value may be, as a rule both checks are made from: the settings file's (zod/mini, made by
 *         settingsFileSchema.ts when a file is read) and a flag's or env var's (checkSettingText, without zod)
 * .why = a bound or a choice is written once, and a run that reads no settings file loads no zod at all (the bench's
 *        one-turn row gives --max-iterations: its check must cost nothing)
 */
export type SettingRule =
  | { kind: 'int'; min: number; max?: number }
  | { kind: 'number'; above: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'string'; pattern?: RegExp; minLength?: number }
  | { kind: 'boolean' }
  /** 90s, 10m, 1h, 1500ms, or a whole number of milliseconds; in milliseconds */
  | { kind: 'duration' }
  /** a list of strings, each checked by `each` (why it is wrong, or null) */
  | { kind: 'list'; each?: (item: string) => string | null; minLength?: number }
  /** an http(s) URL for each supplier */
  | { kind: 'urlsBySupplier' }
  /** variables by name, each with the domain patterns its value may go to; a flag gives NAME=host,host */
  | { kind: 'envMask' }
  /** a builtin guard name, or inline rules {allow, prompt, deny} (each rule parsed as a rules file's) */
  | { kind: 'permission' }
  /** MCP servers in .mcp.json's shape */
  | { kind: 'mcpServers' }
  /** hooks in Claude Code's shape */
  | { kind: 'hooks' };

/** .what = the value a rule gives */
export type SettingRuleValue<TRule extends SettingRule> = TRule extends { kind: 'int' | 'number' | 'duration' }
  ? number
  : TRule extends { kind: 'enum'; values: readonly (infer TChoice)[] }
    ? TChoice
    : TRule extends { kind: 'string' }
      ? string
      : TRule extends { kind: 'boolean' }
        ? boolean
        : TRule extends { kind: 'list' }
          ? string[]
          : TRule extends { kind: 'urlsBySupplier' }
            ? Partial<Record<SettingsSupplier, string>>
            : TRule extends { kind: 'envMask' }
              ? Record<string, string[]>
              : TRule extends { kind: 'permission' }
                ? string | BhrainPermissionRules
                : TRule extends { kind: 'mcpServers' }
                  ? Record<string, McpServerConfig>
                  : TRule extends { kind: 'hooks' }
                    ? HooksSettings
                    : never;

/**
 * .what = --mask-env's values (`NAME=host,host`, repeatable: a name given twice gets both lists) as an env mask, or why
 *         one is not
 */
const readEnvMaskFlags = (items: readonly string[]): { ok: true; value: Record<string, string[]> } | { ok: false; explained: string } => {
  const mask: Record<string, string[]> = {};
  for (const item of items) {
    const at = item.indexOf('=');
    if (at <= 0)
      return {
        ok: false,
        explained: `${JSON.stringify(item)} is not NAME=hosts: give the variable and the hosts its value may go to, e.g. GH_TOKEN=api.github.com,github.com`,
      };
    const name = item.slice(0, at);
    const hosts = item
      .slice(at + 1)
      .split(',')
      .map((host) => host.trim())
      .filter(Boolean);
    mask[name] = [...new Set([...(mask[name] ?? []), ...hosts])];
  }
  const wrong = checkEnvMask(mask);
  return wrong ? { ok: false, explained: wrong } : { ok: true, value: mask };
};

/**
 * .what = a flag's or env var's text checked by a setting's rule, without zod: the value, or why it is not one
 * .note = an `each` check's reason is the whole explanation (`explained`); other failures are worded by the row
 */
export const checkSettingText = (
  rule: SettingRule,
  given: string | string[],
): { ok: true; value: unknown } | { ok: false; explained: string | null } => {
  const fail = (explained: string | null = null) => ({ ok: false as const, explained });
  if (rule.kind === 'envMask') return readEnvMaskFlags([given].flat());
  if (Array.isArray(given) || rule.kind === 'list') {
    const items = Array.isArray(given) ? given : [given];
    const each = rule.kind === 'list' ? rule.each : undefined;
    for (const item of items) {
      const wrong = each?.(item);
      if (wrong) return fail(wrong);
    }
    return { ok: true, value: items };
  }
  const text = given;
  const number = Number(text);
  if (rule.kind === 'int')
    return Number.isInteger(number) && number >= rule.min && number <= (rule.max ?? Infinity) ? { ok: true, value: number } : fail();
  if (rule.kind === 'number') return Number.isFinite(number) && number > rule.above ? { ok: true, value: number } : fail();
  if (rule.kind === 'enum') return rule.values.includes(text) ? { ok: true, value: text } : fail();
  if (rule.kind === 'string')
    return (rule.pattern?.test(text) ?? true) && text.length >= (rule.minLength ?? 0) ? { ok: true, value: text } : fail();
  if (rule.kind === 'duration') {
    const ms = parseDurationMs(text);
    return ms === null ? fail() : { ok: true, value: ms };
  }
  // a flag gives the other kinds as text that is read elsewhere (a rules file path, one URL for every supplier)
  return { ok: true, value: text };
};

/**
 * .what = one setting: where a settings file holds it, its flag, its env vars, its value's check (zod/mini), its
 *         default, and how docs/settings.md and `bhrain config` describe it
 * .why = each setting is described once: the commander flags, the settings-file schema, the env names, `bhrain config`
 *        and the settings table of docs/settings.md are all made from these rows
 */
export interface SettingRow<TRule extends SettingRule = SettingRule, TDefault = unknown> {
  /** its path in a settings file, as `bhrain config` and the messages name it: `network.allowedDomains` */
  fileKey: string;
  /** its flag; absent = a settings file only */
  flag?: {
    /** commander's flags, e.g. '--max-iterations <n>' */
    flags: string;
    /** the --help text, by skill when it differs */
    help: string | { act: string; ask: string };
    /** the skills that offer it; absent = both */
    skills?: readonly ['act'];
    /** repeatable: each use adds to a list */
    repeatable?: true;
    /** what a flag's text is read as before the check (a path resolved against the current directory) */
    parse?: (text: string) => string;
    /** commander shows this default in --help (it is never read as a value: only flags given count) */
    shownInHelp?: string;
    /** the docs table's flag cell, when it differs from the flag's long form (docs/settings.md) */
    readme?: string;
  };
  /** the env vars that give it; absent = none */
  env?: readonly string[];
  /** what its value may be */
  value: TRule;
  /** the message when a flag's or env var's text is not a value (`from` names it: --memory, BHRAIN_MODEL) */
  textError?: (from: string, given: string) => string;
  /** what a value must be, for messages: "a whole number from 1 to 10000" */
  expects: string;
  /** the value when no layer gives one */
  default: TDefault;
  /** the default as `bhrain config` shows it for an unset value */
  shownDefault: string;
  /** the docs table's cells: what a value may be, and the default (docs/settings.md) */
  readme: { value: string; default: string };
}

/** .what = why a path cannot be hidden (it is not absolute, not from ~/, or / itself), or null */
export const checkPathToHide = (path: string): string | null =>
  path === '~' || path.startsWith('~/') || (path.startsWith('/') && path.replace(/\/+$/, '') !== '')
    ? null
    : `${JSON.stringify(path)} is not a path to hide: give one that starts with / or ~/ (and is not / itself), e.g. "~/.config/op"`;

/** .what = why a path cannot name a socket to allow (it is not absolute, nor from ~/), or null */
export const checkSocketPath = (path: string): string | null =>
  path.startsWith('~/') || (path.startsWith('/') && path.replace(/\/+$/, '') !== '')
    ? null
    : `${JSON.stringify(path)} is not a socket's path: give one that starts with / or ~/, e.g. "/var/run/docker.sock"`;

/** .what = why a path cannot name a directory to add (it is not absolute, nor from ~/), or null */
export const checkAddedDirectory = (path: string): string | null =>
  path === '~' || path.startsWith('~/') || path.startsWith('/')
    ? null
    : `${JSON.stringify(path)} is not a directory's absolute path: give one that starts with / or ~/, e.g. "/work/shared" (the flag --add-dir also takes a relative one)`;

/** .what = a row, typed by its rule, its default's type kept (undefined: the setting may be unset) */
const row = <const TRule extends SettingRule, const TDefault extends SettingRuleValue<TRule> | undefined>(
  setting: SettingRow<TRule, TDefault>,
): SettingRow<TRule, TDefault> => setting;

/**
 * .what = a store setting: an s3:// URL, a bucket name as S3 allows it (3-63 lowercase letters, digits, dots and hyphens),
 *         then an optional key prefix of non-empty segments
 */
export const S3_STORE_URL = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/([^/\s?#]+\/)*[^/\s?#]*)?$/;

/** .what = what a store setting must be, for messages */
export const S3_STORE_EXPECTS = 'an s3:// URL naming a bucket and an optional key prefix, e.g. "s3://my-bucket/bhrain"';

const MODEL_EXPECTS = 'a model id without spaces, e.g. "claude-sonnet-4-6" or "qwen3-coder-plus"';

const MAX_ITERATIONS_EXPECTS = `a whole number from ${BHRAIN_CONFIG_BOUNDS.maxIterations.min} to ${BHRAIN_CONFIG_BOUNDS.maxIterations.max}`;

const mustBe = (expects: string) => (from: string, given: string) => `${from} must be ${expects}, got '${given}'`;

/**
 * .what = the settings of a run (act and ask), in the order `bhrain config` and docs/settings.md list them
 * .note = a flag's value is checked by the row's rule (checkSettingText); an explained issue (a domain pattern) is worded
 *         as is, after the flag's name
 */
export const SETTINGS = {
  atom: row({
    fileKey: 'atom',
    flag: {
      flags: '-a, --atom <slug>',
      help: 'the LLM: claude, claude/haiku, claude/sonnet, claude/opus, claude/claude-<id>, qwen, qwen/<model>, openai, openai/<model>',
      readme: '`-a, --atom`',
    },
    env: ['BHRAIN_ATOM'],
    value: { kind: 'string', minLength: 1 },
    expects: 'an atom slug such as "qwen", "claude/sonnet", "qwen/qwen3-coder-plus" or "openai/gpt-5"',
    default: undefined,
    shownDefault: 'the supplier whose key is set',
    readme: {
      value: 'an atom slug: `claude`, `claude/sonnet`, `qwen`, `qwen/<model>`, `openai/<model>`, …',
      default: 'the supplier whose key is set: the first of claude, qwen, openai',
    },
  }),
  model: row({
    fileKey: 'model',
    flag: {
      flags: '-m, --model <id>',
      help: "any model id of the atom's supplier (an unknown id is warned about and its cost is null)",
      readme: '`-m, --model`',
    },
    env: ['BHRAIN_MODEL'],
    value: { kind: 'string', pattern: /^\S+$/ },
    textError: (from, given) => `${from} '${given}' is not a model id: ${MODEL_EXPECTS}`,
    expects: MODEL_EXPECTS,
    default: undefined,
    shownDefault: "the atom's",
    readme: { value: "a model id of the atom's supplier; it goes with the atom, so set them in the same place", default: "the atom's" },
  }),
  baseUrl: row({
    fileKey: 'baseUrl',
    flag: {
      flags: '--base-url <url>',
      help: `the supplier's endpoint (default: ${SUPPLIER_URL_ENV_VARS_TEXT}, else the supplier's own)`,
    },
    env: Object.values(BASE_URL_ENV_VARS),
    value: { kind: 'urlsBySupplier' },
    expects: 'base URLs by supplier, e.g. {"qwen": "http://localhost:8000/v1", "claude": "http://localhost:4000/anthropic"}',
    default: undefined,
    shownDefault: "the supplier's",
    readme: {
      value:
        'by supplier: `{"qwen": "http://localhost:8000/v1", "claude": "http://localhost:4000/anthropic"}`; the atom\'s supplier\'s entry is used. User file only',
      default: "the supplier's",
    },
  }),
  permission: row({
    fileKey: 'permission',
    flag: {
      flags: '--permission <guard>',
      help: {
        act: 'allowAll (default), readOnly, promptForWrites, or a rules file (JSON: {allow, prompt, deny})',
        ask: 'ask is always readOnly',
      },
    },
    // a flag names a builtin guard or a rules file: resolvePermission reads it
    value: { kind: 'permission' },
    expects: `${BUILTIN_GUARD_NAMES.join(', ')}, or inline rules {"allow": [...], "prompt": [...], "deny": [...]}`,
    default: 'allowAll',
    shownDefault: 'allowAll (act), readOnly (ask)',
    readme: {
      value:
        '`allowAll`, `readOnly`, `promptForWrites`, or inline rules in the rules file\'s syntax: `{"allow": [...], "prompt": [...], "deny": [...]}` (a rules file path is a flag only)',
      default: '`allowAll`',
    },
  }),
  allowedTools: row({
    fileKey: 'allowedTools',
    flag: {
      flags: '--allowed-tools <rule>',
      help: 'a call this rule matches runs without asking, where the permission would ask: Claude Code\'s syntax, e.g. "Bash(npm test:*)", "Edit(src/**)" (repeatable)',
      repeatable: true,
      readme: '`--allowed-tools` (repeatable)',
    },
    value: { kind: 'list' },
    expects: 'a list of permission rules, e.g. ["bash(npm test:*)", "edit(src/**)"]',
    default: [] as string[],
    shownDefault: 'none',
    readme: {
      value:
        'rules in Claude Code\'s syntax: a call one matches runs without asking where the permission would ask; a denial stays a denial: `["bash(npm test:*)", "edit(src/**)"]`',
      default: 'none',
    },
  }),
  disallowedTools: row({
    fileKey: 'disallowedTools',
    flag: {
      flags: '--disallowed-tools <rule>',
      help: 'a call this rule matches is refused, whatever else allows it: Claude Code\'s syntax, e.g. "Bash(git push:*)", "WebSearch" (repeatable)',
      repeatable: true,
      readme: '`--disallowed-tools` (repeatable)',
    },
    value: { kind: 'list' },
    expects: 'a list of permission rules, e.g. ["bash(git push:*)", "websearch"]',
    default: [] as string[],
    shownDefault: 'none',
    readme: {
      value:
        "rules in Claude Code's syntax: a call one matches is refused, whatever else allows it: `[\"bash(git push:*)\"]`; every layer's rules add up (a flag adds to the files')",
      default: 'none',
    },
  }),
  additionalDirectories: row({
    fileKey: 'additionalDirectories',
    flag: {
      flags: '--add-dir <dir>',
      help: 'let the run change this directory too, confined as the working directory is (repeatable)',
      skills: ['act'],
      repeatable: true,
      // as the shell completed it: relative to where the command was typed, not to -C's directory
      parse: (text) => (text === '~' || text.startsWith('~/') ? text : resolve(text)),
      readme: '`--add-dir` (repeatable)',
    },
    value: { kind: 'list', each: checkAddedDirectory },
    expects: 'a list of directories, each absolute or starting with ~/, e.g. ["/work/shared"]',
    default: [] as string[],
    shownDefault: 'none: only the working directory',
    readme: {
      value:
        'directories the run may change besides the working directory, each absolute or from `~/`: `["/work/shared"]`. Bash\'s sandbox binds each writable and the protected paths in it stay protected; one that is hidden, protected, or holds a directory of PATH is exit 2 ([Sandbox](#sandbox))',
      default: 'none',
    },
  }),
  checkpoints: row({
    fileKey: 'checkpoints',
    flag: {
      flags: '--no-checkpoints',
      help: 'record no checkpoint of the files this run changes: `bhrain rewind` cannot undo it',
      skills: ['act'],
    },
    value: { kind: 'boolean' },
    expects: 'true or false',
    default: true,
    shownDefault: 'true',
    readme: {
      value:
        '`false` records no checkpoint of the files an `act` run changes, so `bhrain rewind` cannot undo it ([Rewind](continuation.md#rewind))',
      default: '`true`',
    },
  }),
  checkpointIgnoredMaxBytes: row({
    fileKey: 'checkpointIgnoredMaxBytes',
    flag: {
      flags: '--checkpoint-ignored-max-bytes <n>',
      help: 'checkpoint git-ignored files too, those up to n bytes each (default 0: ignored files are not checkpointed)',
      skills: ['act'],
    },
    value: { kind: 'int', min: 0, max: 1024 * 1024 * 1024 },
    expects: 'a whole number of bytes from 0 to 1073741824',
    default: 0,
    shownDefault: '0',
    readme: {
      value:
        'ignored files (`.gitignore`, `info/exclude`) up to this many bytes each are checkpointed too; `0`: none, and `bhrain rewind` leaves them as they are',
      default: '`0`',
    },
  }),
  sandbox: row({
    fileKey: 'sandbox',
    flag: {
      flags: '--sandbox <mode>',
      help: {
        act: 'where bash runs: workspace-write (default: only the working directory and a private /tmp are writable), read-only, or off (unconfined)',
        ask: 'ask is always read-only (only read-only is accepted)',
      },
    },
    value: { kind: 'enum', values: BASH_SANDBOX_MODES },
    textError: (from, given) => `unknown ${from} '${given}': choose one of ${BASH_SANDBOX_MODES.join(', ')}`,
    expects: `one of ${BASH_SANDBOX_MODES.join(', ')}, or {"mode": "<one of them>", "denyRead": ["~/.config/op"]}`,
    default: DEFAULT_BASH_SANDBOX_MODE,
    shownDefault: `${DEFAULT_BASH_SANDBOX_MODE} (act), read-only (ask, and act with permission readOnly)`,
    readme: {
      value: '`workspace-write`, `read-only` or `off`; or `{"mode": "<one of them>", "denyRead": [...]}`',
      default: '`workspace-write`; `read-only` with `readOnly`',
    },
  }),
  denyRead: row({
    fileKey: 'sandbox.denyRead',
    value: { kind: 'list', each: checkPathToHide },
    expects: 'a list of paths, each absolute or starting with ~/, e.g. ["~/.config/op", "/srv/secrets"]',
    default: [] as string[],
    shownDefault: 'none added; the credential stores and $BHRAIN_HOME are always hidden',
    readme: {
      value:
        'paths hidden from the model besides the credential stores and `$BHRAIN_HOME` ([Sandbox](#sandbox)), each absolute or from `~/`: `{"sandbox": {"denyRead": ["~/.config/op", "/srv/secrets"]}}`. Every file\'s paths are hidden together: a nearer file adds to a farther one, never replaces it',
      default: 'none added',
    },
  }),
  allowUnixSockets: row({
    fileKey: 'sandbox.allowUnixSockets',
    value: { kind: 'list', each: checkSocketPath },
    expects: 'a list of unix sockets\' paths, each absolute or starting with ~/, e.g. ["/var/run/docker.sock"]',
    default: [] as string[],
    shownDefault: 'none: bash reaches no unix socket of the host',
    readme: {
      value:
        'the host\'s unix sockets bash may connect to, each absolute or from `~/`: `{"sandbox": {"allowUnixSockets": ["/var/run/docker.sock"]}}`; each must be a socket, every other socket of the host stays hidden, and a warning says what each grants; not with `allowNetwork` ([Sandbox](#sandbox))',
      default: 'none',
    },
  }),
  allowNetwork: row({
    fileKey: 'allowNetwork',
    flag: { flags: '--allow-network', help: 'let bash reach the network (off in the sandbox by default)', skills: ['act'] },
    value: { kind: 'boolean' },
    expects: 'true or false',
    default: false,
    shownDefault: 'false',
    readme: { value: '`true` or `false`', default: '`false`' },
  }),
  allowedDomains: row({
    fileKey: 'network.allowedDomains',
    flag: {
      flags: '--allow-domain <pattern>',
      help: "let bash reach this host, through bhrain's proxy (repeatable): api.example.com, or *.example.com for any subdomain (not example.com itself)",
      skills: ['act'],
      repeatable: true,
      readme: '`--allow-domain` (repeatable)',
    },
    value: { kind: 'list', each: checkDomainPattern },
    expects: `a list of domain patterns, e.g. ["registry.npmjs.org", "*.github.com"]: each ${DOMAIN_PATTERN_EXPECTS}`,
    default: [] as string[],
    shownDefault: 'none: the network is off',
    readme: {
      value:
        'the hosts bash may reach through bhrain\'s proxy: exact names and `*.example.com` (any subdomain, not example.com itself), e.g. `{"network": {"allowedDomains": ["registry.npmjs.org", "*.github.com"]}}`; see [Sandbox](#sandbox)',
      default: 'none: the network is off',
    },
  }),
  passEnv: row({
    fileKey: 'sandbox.env.pass',
    flag: {
      flags: '--pass-env <name>',
      help: "pass this variable of bhrain's environment to the model's commands by its exact name (repeatable): they get only what builds need, no credential, unless passed",
      repeatable: true,
      readme: '`--pass-env` (repeatable)',
    },
    value: { kind: 'list', each: checkPassedEnvName },
    expects: 'a list of variable names, e.g. ["NPM_TOKEN"]',
    default: [] as string[],
    shownDefault: 'none: no credential reaches the commands',
    readme: {
      value:
        'variables passed to bash by their exact names besides [the ones it gets](sandbox-and-permissions.md#the-commands-environment), credentials too: `{"sandbox": {"env": {"pass": ["NPM_TOKEN"]}}}`',
      default: 'none',
    },
  }),
  maskEnv: row({
    fileKey: 'sandbox.env.mask',
    flag: {
      flags: '--mask-env <name=hosts>',
      help: "give bash this variable as a placeholder; bhrain's proxy writes its value into https requests to these hosts only, in headers and basic auth (repeatable): GH_TOKEN=api.github.com,github.com",
      skills: ['act'],
      repeatable: true,
      readme: '`--mask-env` (repeatable)',
    },
    value: { kind: 'envMask' },
    expects: `variables by name, each with the hosts its value may go to, e.g. {"GH_TOKEN": ["api.github.com", "github.com"]}: each host ${DOMAIN_PATTERN_EXPECTS}`,
    default: {} as Record<string, string[]>,
    shownDefault: 'none',
    readme: {
      value:
        'variables bash sees only as a placeholder, each with the hosts bhrain\'s proxy writes the real value to (over https, in headers and basic auth): `{"sandbox": {"env": {"mask": {"GH_TOKEN": ["api.github.com", "github.com"]}}}}`. The hosts are allowed domains too; needs the proxy (not with `allowNetwork` or `sandbox` `off`); see [Credentials masked](sandbox-and-permissions.md#credentials-masked)',
      default: 'none',
    },
  }),
  maxIterations: row({
    fileKey: 'maxIterations',
    flag: { flags: '--max-iterations <n>', help: 'stop after n loop iterations (exit 3): the partial answer on stdout, why on stderr' },
    value: { kind: 'int', ...BHRAIN_CONFIG_BOUNDS.maxIterations },
    expects: MAX_ITERATIONS_EXPECTS,
    default: DEFAULT_MAX_ITERATIONS,
    shownDefault: String(DEFAULT_MAX_ITERATIONS),
    readme: {
      value: MAX_ITERATIONS_EXPECTS,
      default: String(DEFAULT_MAX_ITERATIONS),
    },
  }),
  memory: row({
    fileKey: 'memory',
    flag: { flags: '--memory <strategy>', help: 'summarize-on-limit or truncate', shownInHelp: MEMORY_STRATEGIES[0] },
    value: { kind: 'enum', values: MEMORY_STRATEGIES },
    textError: (from, given) => `unknown ${from} '${given}': choose ${MEMORY_STRATEGIES.join(' or ')}`,
    expects: `one of ${MEMORY_STRATEGIES.join(', ')}`,
    default: MEMORY_STRATEGIES[0],
    shownDefault: MEMORY_STRATEGIES[0],
    readme: { value: '`summarize-on-limit` or `truncate`', default: '`summarize-on-limit`' },
  }),
  timeoutMs: row({
    fileKey: 'timeoutMs',
    flag: {
      flags: '--timeout-ms <n>',
      help: 'LLM request timeout and the longest silence inside a streamed answer (default 600000 / 120000)',
    },
    value: { kind: 'int', min: 1 },
    expects: 'a whole number of milliseconds of at least 1',
    default: undefined,
    shownDefault: '600000 / 120000',
    readme: { value: 'a whole number of milliseconds', default: '600,000 / 120,000' },
  }),
  maxBudgetUsd: row({
    fileKey: 'maxBudgetUsd',
    flag: { flags: '--max-budget-usd <usd>', help: 'stop before a request once the run has cost this much (exit 6)' },
    value: { kind: 'number', ...BHRAIN_CONFIG_BOUNDS.maxBudgetUsd },
    expects: 'a positive amount of US dollars, e.g. 0.50',
    default: undefined,
    shownDefault: 'none',
    readme: { value: 'a positive amount of US dollars', default: 'none' },
  }),
  maxTokens: row({
    fileKey: 'maxTokens',
    flag: {
      flags: '--max-tokens <n>',
      help: 'stop before a request once the run has used this many tokens, all kinds summed (exit 6)',
    },
    value: { kind: 'int', ...BHRAIN_CONFIG_BOUNDS.maxTokens },
    expects: `a whole number of tokens of at least ${BHRAIN_CONFIG_BOUNDS.maxTokens.min}`,
    default: undefined,
    shownDefault: 'none',
    readme: { value: `a whole number of at least ${BHRAIN_CONFIG_BOUNDS.maxTokens.min}`, default: 'none' },
  }),
  maxWallTime: row({
    fileKey: 'maxWallTime',
    flag: {
      flags: '--max-wall-time <duration>',
      help: 'stop before a request once the run has lasted this long: 90s, 10m, 1h, or ms (exit 6)',
    },
    value: { kind: 'duration' },
    textError: mustBe('a duration such as 90s, 10m, 1h or 1500ms'),
    expects: 'a duration such as "90s", "10m", "1h" or "1500ms", or a whole number of milliseconds',
    default: undefined,
    shownDefault: 'none',
    readme: { value: '`"90s"`, `"10m"`, `"1h"`, `"1500ms"`, or a number of milliseconds', default: 'none' },
  }),
  projectInstructions: row({
    fileKey: 'projectInstructions',
    flag: {
      flags: '--no-project-instructions',
      help: 'do not read AGENTS.md / CLAUDE.md (from the repository root down to here, and the user-level ones)',
    },
    value: { kind: 'boolean' },
    expects: 'true or false',
    default: true,
    shownDefault: 'true',
    readme: { value: '`false` reads no `AGENTS.md` / `CLAUDE.md`', default: '`true`' },
  }),
  skills: row({
    fileKey: 'skills',
    flag: {
      flags: '--no-skills',
      help: 'do not offer Agent Skills (SKILL.md in .bhrain/skills, .claude/skills, .agents/skills and your config dir)',
    },
    value: { kind: 'boolean' },
    expects: 'true or false',
    default: true,
    shownDefault: 'true',
    readme: {
      value: '`false` offers no [Agent Skills](skills-and-agents.md#agent-skills-skillmd) (no listing, no `skill` tool)',
      default: '`true`',
    },
  }),
  systemPrompt: row({
    fileKey: 'systemPrompt',
    flag: {
      flags: '--system-prompt <text>',
      help: "replace bhrain's own system prompt (who it is, where it works, its tools); project instructions, skills and --append-system-prompt still follow",
    },
    value: { kind: 'string', minLength: 1 },
    expects: 'a non-empty string',
    default: undefined,
    shownDefault: "bhrain's",
    readme: {
      value:
        "text that replaces bhrain's own opening of the system prompt; the project instructions, the skills and the appended text still follow",
      default: "bhrain's",
    },
  }),
  appendSystemPrompt: row({
    fileKey: 'appendSystemPrompt',
    flag: { flags: '--append-system-prompt <text>', help: "text added at the end of bhrain's system prompt" },
    value: { kind: 'string' },
    expects: 'a string',
    default: undefined,
    shownDefault: 'none',
    readme: { value: 'text added at the end of the system prompt', default: 'none' },
  }),
  store: row({
    fileKey: 'store',
    flag: {
      flags: '--store <url>',
      help: 'the ref store shared by many runners: s3://bucket/prefix (default: the local one in BHRAIN_HOME); BHRAIN_S3_ENDPOINT for an S3-compatible service',
    },
    env: ['BHRAIN_STORE'],
    value: { kind: 'string', pattern: S3_STORE_URL },
    textError: (from, given) => `${from} '${given}' is not a ref store: give ${S3_STORE_EXPECTS}, or leave it unset for the local store`,
    expects: S3_STORE_EXPECTS,
    default: undefined,
    shownDefault: 'the local store in BHRAIN_HOME',
    readme: {
      value:
        'the [shared ref store](fleet.md#a-shared-ref-store): `"s3://bucket/prefix"`; `BHRAIN_S3_ENDPOINT` for an S3-compatible service. User file only',
      default: 'the local store in `$BHRAIN_HOME`',
    },
  }),
};

/**
 * .what = the settings-file keys that are not run settings: MCP servers, and the user's approval of a project (its MCP
 *         servers, or all it loosens); the approval keys are read from the user's file only
 * .note = their flags (--mcp-config, --trust-project) are not settings: the readme's cell names them
 */
export const FILE_SETTINGS = {
  mcpServers: row({
    fileKey: 'mcpServers',
    value: { kind: 'mcpServers' },
    expects: "MCP servers by name, in .mcp.json's shape",
    default: undefined,
    shownDefault: 'none',
    readme: { value: "MCP servers in `.mcp.json`'s shape; a project file's servers start only once approved", default: 'none' },
  }),
  hooks: row({
    fileKey: 'hooks',
    value: { kind: 'hooks' },
    expects:
      'hooks by event, in Claude Code\'s shape, e.g. {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]}',
    default: undefined,
    shownDefault: 'none',
    readme: {
      value: "commands run at a session's events, in Claude Code's shape ([Hooks](hooks.md)); a project file's run only once approved",
      default: 'none',
    },
  }),
  enableAllProjectMcpServers: row({
    fileKey: 'enableAllProjectMcpServers',
    value: { kind: 'boolean' },
    expects: 'true or false',
    default: false,
    shownDefault: 'false',
    readme: { value: '`true` approves every project MCP server (`.mcp.json`, project `mcpServers`). User file only', default: '`false`' },
  }),
  enabledMcpjsonServers: row({
    fileKey: 'enabledMcpjsonServers',
    value: { kind: 'list' },
    expects: 'a list of MCP server names, e.g. ["github"]',
    default: [] as string[],
    shownDefault: 'none',
    readme: { value: 'the project MCP servers you approve, by name: `["github"]`. User file only', default: 'none' },
  }),
  trustedProjects: row({
    fileKey: 'trustedProjects',
    value: { kind: 'list', minLength: 1 },
    expects: 'a list of repository roots, e.g. ["~/src/my-app"]',
    default: [] as string[],
    shownDefault: 'none',
    readme: {
      value:
        'the projects you approve, by repository root: `["~/src/my-app"]` (`~/` is your home; symlinks resolved). An approved project\'s files may loosen `sandbox`, `allowNetwork`, `network.allowedDomains`, `sandbox.env.pass`, `sandbox.env.mask`, `sandbox.allowUnixSockets` and `permission`, its MCP servers start, and its `hooks` run. User file only',
      default: 'none',
    },
  }),
};

/** .what = the readme's flag cell of the file-only keys: flags that act on them without being settings */
const FILE_SETTING_FLAGS: Partial<Record<keyof typeof FILE_SETTINGS, string>> = {
  mcpServers: '`--mcp-config`',
  trustedProjects: '`--trust-project` (act, this run)',
};

/** .what = the name of a run setting: a key of SETTINGS, and the camelCase of its flag */
export type SettingKey = keyof typeof SETTINGS;

/** .what = the keys of the run settings, in the table's order */
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingKey[];

/** .what = the commander attribute of a row's flag: `allowDomain` for --allow-domain, `projectInstructions` for --no-… */
export const flagAttribute = (setting: SettingRow): string | undefined => {
  const long = setting.flag?.flags.split(/[ ,]+/).find((part) => part.startsWith('--'));
  return long?.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
};

/** .what = a row's flag as a user names it: `--max-iterations`, or where it has none, its settings-file key */
export const flagName = (setting: SettingRow): string =>
  setting.flag?.flags.split(/[ ,]+/).find((part) => part.startsWith('--')) ?? `(settings only: ${setting.fileKey})`;

/** .what = the readme's settings table, made from the table: key, flag, value, default */
export const formatReadmeSettingsTable = (): string => {
  const rows = [
    ...SETTING_NAMES.map((key) => ({ setting: SETTINGS[key] as SettingRow, flag: SETTINGS[key].flag })),
    ...(Object.keys(FILE_SETTINGS) as Array<keyof typeof FILE_SETTINGS>).map((key) => ({
      setting: FILE_SETTINGS[key] as SettingRow,
      flag: FILE_SETTING_FLAGS[key],
    })),
  ].map(({ setting, flag }) => {
    const flagCell = typeof flag === 'string' ? flag : flag ? (flag.readme ?? `\`${flagName(setting)}\``) : '';
    return `| \`${setting.fileKey}\` |${flagCell ? ` ${flagCell} ` : ' '}| ${setting.readme.value} | ${setting.readme.default} |`;
  });
  return ['| key | flag | value | default |', '|---|---|---|---|', ...rows].join('\n');
};

/**
 * .what = where a resolved setting came from: a flag, an env var, a project or user settings file, or bhrain's default
 * .why = `bhrain config` shows it, so a user sees which layer to change
 */
export type SettingSource = 'flag' | 'default' | `env:${string}` | `project:${string}` | `user:${string}`;

/** .what = the settings that flags were explicitly given for, as commander parsed them (strings, booleans, lists) */
export type SkillSettingsFlags = Partial<Record<SettingKey, string | boolean | string[]>>;

/** .what = a setting's name where a user writes it: its path in a settings file (`network.allowedDomains`, `sandbox.denyRead`), `bhrain config`'s rows */
export const settingFileKey = (key: SettingKey): string => SETTINGS[key].fileKey;

/** .what = where a setting's value came from, as a user names it: its flag, its env var, or its file key and file */
export const nameSettingOrigin = (key: SettingKey, source: SettingSource): string =>
  source === 'flag'
    ? flagName(SETTINGS[key])
    : source.startsWith('env:')
      ? source.slice('env:'.length)
      : source === 'default'
        ? settingFileKey(key)
        : `${settingFileKey(key)} (${source.replace(/^(project|user):/, '')})`;

/** .what = the top-level keys of a settings file that hold run settings (`network` holds allowedDomains) */
export const SETTINGS_FILE_TOP_KEYS = [...new Set(SETTING_NAMES.map((key) => settingFileKey(key).split('.')[0]))];

/** .what = the setting a commander attribute is the flag of (`allowDomain` for allowedDomains), or undefined */
export const settingOfAttribute = (attribute: string): SettingKey | undefined =>
  SETTING_NAMES.find((key) => flagAttribute(SETTINGS[key]) === attribute);

/**
 * .what = the settings flags a parsed command was explicitly given (commander's option value source 'cli'), as strings
 * .why = commander fills in defaults (--memory, --no-project-instructions' true): read as given, they would mask the
 *        env and the settings files. Kept light (no schema is run), so a command's --help stays fast
 */
export const pickExplicitFlags = (command: Command): SkillSettingsFlags => {
  const flags: SkillSettingsFlags = {};
  for (const key of SETTING_NAMES) {
    const attribute = flagAttribute(SETTINGS[key]);
    if (!attribute) continue;
    const source = command.getOptionValueSource(attribute);
    if (source !== undefined && source !== 'default') flags[key] = command.getOptionValue(attribute) as string | boolean | string[];
  }
  return flags;
};

/** .what = a setting's value, as its row's rule gives it; undefined where its default is (the setting may be unset) */
type SettingValue<K extends SettingKey> =
  (typeof SETTINGS)[K] extends SettingRow<infer TRule, infer TDefault>
    ? SettingRuleValue<TRule> | (undefined extends TDefault ? undefined : never)
    : never;

/**
 * .what = the settings of a skill run, resolved from every layer and checked: each as its row in the settings table
 *         types it, but baseUrl (the URL of the atom's supplier) and permission (a rules file path, from the flag)
 * .why = one typed value that runSkill reads instead of raw flag strings
 */
export type SkillSettings = { [K in Exclude<SettingKey, 'baseUrl' | 'permission'>]: SettingValue<K> } & {
  baseUrl: string | undefined;
  /** a builtin guard name, a rules file path (from --permission only), or inline rules (from a settings file) */
  permission: string | BhrainPermissionRules;
};

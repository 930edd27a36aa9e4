import type { Command } from 'commander';

import { DEFAULT_BASH_SANDBOX_MODE, DEFAULT_MAX_ITERATIONS, MAX_ITERATIONS_LIMIT } from '../../agent/constants.js';
import type { BhrainPermissionRules } from '../../agent/permission/genRulesGuard.js';
import { BASH_SANDBOX_MODES, type BashSandboxMode } from '../../sandbox/BashSandbox.js';
import { DOMAIN_PATTERN_EXPECTS } from '../../sandbox/network/allowedDomains.js';

/** .what = the memory strategies a run can use, by the name --memory and the settings file give them */
export const MEMORY_STRATEGIES = ['summarize-on-limit', 'truncate'] as const;
export type MemoryStrategy = (typeof MEMORY_STRATEGIES)[number];

/** .what = the builtin permission guards, by the name --permission and the settings file give them */
export const BUILTIN_GUARD_NAMES = ['allowAll', 'readOnly', 'promptForWrites'] as const;

/** .what = the suppliers a settings file may give a base URL for: the first part of an atom slug */
export const SETTINGS_SUPPLIERS = ['claude', 'qwen'] as const;
export type SettingsSupplier = (typeof SETTINGS_SUPPLIERS)[number];

/** .what = the env var each supplier's atom reads its endpoint from */
export const BASE_URL_ENV_VARS: Record<SettingsSupplier, string> = { claude: 'ANTHROPIC_BASE_URL', qwen: 'QWEN_BASE_URL' };

/**
 * .what = where a resolved setting came from: a flag, an env var, a project or user settings file, or bhrain's default
 * .why = `bhrain config` shows it, so a user sees which layer to change
 */
export type SettingSource = 'flag' | 'default' | `env:${string}` | `project:${string}` | `user:${string}`;

/**
 * .what = the settings of a skill run, resolved from every layer and checked
 * .why = one typed value that runSkill reads instead of raw flag strings
 */
export interface SkillSettings {
  /** the atom slug; undefined when no layer gives one (a run then fails: the atom is required) */
  atom: string | undefined;
  /** a raw model id that overrides the slug's model */
  model: string | undefined;
  /** the endpoint of the atom's supplier; undefined for the supplier's own */
  baseUrl: string | undefined;
  /** a builtin guard name, a rules file path (from --permission only), or inline rules (from a settings file) */
  permission: string | BhrainPermissionRules;
  sandbox: BashSandboxMode;
  /** paths hidden from the model besides the credential stores and $BHRAIN_HOME: every layer's, together */
  denyRead: string[];
  allowNetwork: boolean;
  /** the hosts bash may reach through bhrain's proxy (--allow-domain, network.allowedDomains); empty: none */
  allowedDomains: string[];
  maxIterations: number;
  memory: MemoryStrategy;
  /** the LLM request timeout; undefined for the atom's defaults (600000 to start answering, 120000 of silence) */
  timeoutMs: number | undefined;
  maxBudgetUsd: number | undefined;
  maxTokens: number | undefined;
  /** in milliseconds (the flag and the file take 90s, 10m, 1h, 1500ms) */
  maxWallTime: number | undefined;
  /** false turns off AGENTS.md / CLAUDE.md (--no-project-instructions) */
  projectInstructions: boolean;
  /** text added at the end of the system prompt */
  appendSystemPrompt: string | undefined;
}

/** .what = the name of a setting: a key of the settings file, and the camelCase of its flag */
export type SettingKey = keyof SkillSettings;

/** .what = the settings that flags were explicitly given for, as commander parsed them (strings, booleans, lists) */
export type SkillSettingsFlags = Partial<Record<SettingKey, string | boolean | string[]>>;

/**
 * .what = each setting's flag, its default as shown, and what its file value must be (for error messages); where they
 *         differ from the setting's name, its path in a settings file (fileKey) and its flag's commander attribute
 */
export const SETTING_KEYS: Record<
  SettingKey,
  { flag: string; expects: string; shownDefault: string; fileKey?: string; attribute?: string }
> = {
  atom: {
    flag: '--atom',
    expects: 'an atom slug such as "qwen", "claude/sonnet" or "qwen/qwen3-coder-plus"',
    shownDefault: 'none: required',
  },
  model: {
    flag: '--model',
    expects: 'a model id without spaces, e.g. "claude-sonnet-4-6" or "qwen3-coder-plus"',
    shownDefault: "the atom's",
  },
  baseUrl: {
    flag: '--base-url',
    expects: 'base URLs by supplier, e.g. {"qwen": "http://localhost:8000/v1", "claude": "http://localhost:4000/anthropic"}',
    shownDefault: "the supplier's",
  },
  permission: {
    flag: '--permission',
    expects: `${BUILTIN_GUARD_NAMES.join(', ')}, or inline rules {"allow": [...], "prompt": [...], "deny": [...]}`,
    shownDefault: 'allowAll (act), readOnly (ask)',
  },
  sandbox: {
    flag: '--sandbox',
    expects: `one of ${BASH_SANDBOX_MODES.join(', ')}, or {"mode": "<one of them>", "denyRead": ["~/.config/op"]}`,
    shownDefault: `${DEFAULT_BASH_SANDBOX_MODE} (act), read-only (ask, and act with permission readOnly)`,
  },
  denyRead: {
    flag: '(settings only: sandbox.denyRead)',
    expects: 'a list of paths, each absolute or starting with ~/, e.g. ["~/.config/op", "/srv/secrets"]',
    shownDefault: 'none added; the credential stores and $BHRAIN_HOME are always hidden',
    fileKey: 'sandbox.denyRead',
  },
  allowNetwork: { flag: '--allow-network', expects: 'true or false', shownDefault: 'false' },
  allowedDomains: {
    flag: '--allow-domain',
    fileKey: 'network.allowedDomains',
    attribute: 'allowDomain',
    expects: `a list of domain patterns, e.g. ["registry.npmjs.org", "*.github.com"]: each ${DOMAIN_PATTERN_EXPECTS}`,
    shownDefault: 'none: the network is off',
  },
  maxIterations: {
    flag: '--max-iterations',
    expects: `a whole number from 1 to ${MAX_ITERATIONS_LIMIT}`,
    shownDefault: String(DEFAULT_MAX_ITERATIONS),
  },
  memory: { flag: '--memory', expects: `one of ${MEMORY_STRATEGIES.join(', ')}`, shownDefault: MEMORY_STRATEGIES[0] },
  timeoutMs: { flag: '--timeout-ms', expects: 'a whole number of milliseconds of at least 1', shownDefault: '600000 / 120000' },
  maxBudgetUsd: { flag: '--max-budget-usd', expects: 'a positive amount of US dollars, e.g. 0.50', shownDefault: 'none' },
  maxTokens: { flag: '--max-tokens', expects: 'a whole number of tokens of at least 1', shownDefault: 'none' },
  maxWallTime: {
    flag: '--max-wall-time',
    expects: 'a duration such as "90s", "10m", "1h" or "1500ms", or a whole number of milliseconds',
    shownDefault: 'none',
  },
  projectInstructions: { flag: '--no-project-instructions', expects: 'true or false', shownDefault: 'true' },
  appendSystemPrompt: { flag: '--append-system-prompt', expects: 'a string', shownDefault: 'none' },
};

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** .what = a setting's name where a user writes it: its path in a settings file (`network.allowedDomains`, `sandbox.denyRead`), `bhrain config`'s rows */
export const settingFileKey = (key: SettingKey): string => SETTING_KEYS[key].fileKey ?? key;

/** .what = where a setting's value came from, as a user names it: its flag, its env var, or its file key and file */
export const nameSettingOrigin = (key: SettingKey, source: SettingSource): string =>
  source === 'flag'
    ? SETTING_KEYS[key].flag
    : source.startsWith('env:')
      ? source.slice('env:'.length)
      : source === 'default'
        ? settingFileKey(key)
        : `${settingFileKey(key)} (${source.replace(/^(project|user):/, '')})`;

/** .what = the top-level keys of a settings file that hold run settings (`network` holds allowedDomains) */
export const SETTINGS_FILE_TOP_KEYS = [
  ...new Set((Object.keys(SETTING_KEYS) as SettingKey[]).map((key) => settingFileKey(key).split('.')[0])),
];

/** .what = the setting a commander attribute is the flag of (`allowDomain` for allowedDomains), or undefined */
export const settingOfAttribute = (attribute: string): SettingKey | undefined =>
  (Object.keys(SETTING_KEYS) as SettingKey[]).find((key) => (SETTING_KEYS[key].attribute ?? key) === attribute);

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
 * .what = the settings flags a parsed command was explicitly given (commander's option value source 'cli'), as strings
 * .why = commander fills in defaults (--memory, --no-project-instructions' true): read as given, they would mask the
 *        env and the settings files. Kept light (no zod), so a command's --help stays fast
 */
export const pickExplicitFlags = (command: Command): SkillSettingsFlags => {
  const flags: SkillSettingsFlags = {};
  for (const key of Object.keys(SETTING_KEYS) as SettingKey[]) {
    const attribute = SETTING_KEYS[key].attribute ?? key;
    const source = command.getOptionValueSource(attribute);
    if (source !== undefined && source !== 'default') flags[key] = command.getOptionValue(attribute) as string | boolean | string[];
  }
  return flags;
};

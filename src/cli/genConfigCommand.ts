import { Command } from 'commander';

import { BadRequestError } from '../core/contract/errors.js';
import { EXIT_CODES } from './exitCodes.js';
import { reportReadCommandFailure } from './genRunsCommand.js';
import { genSkillCommand, type SkillName } from './genSkillCommand.js';
import type { ResolvedSkillSettings } from './settings/resolveSkillSettings.js';
import {
  KEY_ENV_VARS,
  SETTINGS,
  SETTINGS_SUPPLIERS,
  SETTING_NAMES,
  type SettingsSupplier,
  type SettingKey,
  pickExplicitFlags,
  settingFileKey,
  settingOfAttribute,
} from './settings/settingsTable.js';

/** .what = the schemaVersion of `bhrain config -o json`; it changes when a field changes meaning or goes away */
export const CONFIG_OUTPUT_SCHEMA_VERSION = 1;

/** .what = where `bhrain config` reads and writes; the process's own unless a test gives others */
export interface ConfigCommandContext {
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdout?: { write: (text: string) => unknown };
  stderr?: { write: (text: string) => unknown };
  setExitCode?: (code: number) => void;
}

/** .what = milliseconds as the shortest exact duration a user writes: 1h, 10m, 90s, 1500ms */
const formatDurationMs = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;

/** .what = a resolved value as the table shows it; an unset one as its default in parentheses */
const formatValue = (key: SettingKey, value: unknown): string => {
  if (value === undefined || (Array.isArray(value) && !value.length)) return `(${SETTINGS[key].shownDefault})`;
  if (key === 'allowedDomains') return (value as string[]).join(', ');
  // as the flag is written: GH_TOKEN=api.github.com,github.com
  if (key === 'maskEnv')
    return Object.keys(value as object).length
      ? Object.entries(value as Record<string, string[]>)
          .map(([name, hosts]) => `${name}=${hosts.join(',')}`)
          .join(' ')
      : `(${SETTINGS[key].shownDefault})`;
  if (key === 'maxWallTime') return formatDurationMs(value as number);
  const text = typeof value === 'string' && key !== 'appendSystemPrompt' ? value : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** .what = where the atom's supplier key comes from: the env var a run reads it from (never its value), or none */
export interface ConfigKeySource {
  supplier: SettingsSupplier;
  /** env:NAME of the variable that holds the key, or null when none is set */
  source: string | null;
  /** every variable the supplier's atom reads a key from, in order of preference */
  envVars: readonly string[];
}

/** .what = the key source of the atom's supplier; null when no atom is set or its supplier is not one bhrain knows */
const readKeySource = (atom: string | undefined, env: Record<string, string | undefined>): ConfigKeySource | null => {
  const supplier = atom?.split('/')[0];
  if (!supplier || !(SETTINGS_SUPPLIERS as readonly string[]).includes(supplier)) return null;
  const envVars = KEY_ENV_VARS[supplier as SettingsSupplier];
  const set = envVars.find((name) => !!env[name]);
  return { supplier: supplier as SettingsSupplier, source: set ? `env:${set}` : null, envVars };
};

/** .what = the key line of the text output: which variable holds the key, or which to set */
const formatKey = (key: ConfigKeySource | null): string[] =>
  !key
    ? []
    : [
        key.source
          ? `key of ${key.supplier}: ${key.source} (its value is not shown)`
          : `key of ${key.supplier}: none set (set ${key.envVars.join(' or ')}; a self-hosted server may need none)`,
        '',
      ];

/** .what = the resolved settings as text: an aligned table of setting, value, source, then the files looked at */
const formatSettings = (resolved: ResolvedSkillSettings, input: { skill: SkillName; cwd: string; key: ConfigKeySource | null }): string => {
  const rows = [
    ['SETTING', 'VALUE', 'SOURCE'],
    ...SETTING_NAMES.map((key) => [settingFileKey(key), formatValue(key, resolved.values[key]), resolved.sources[key]]),
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column].length)));
  const table = rows.map((row) => `${row[0].padEnd(widths[0])}  ${row[1].padEnd(widths[1])}  ${row[2]}`.trimEnd());
  const files = resolved.files.map((file) => `  ${file.layer.padEnd(7)}  ${file.path}${file.found ? '' : '  (not found)'}`);
  return [
    `settings of \`bhrain ${input.skill}\` in ${input.cwd} (precedence: flag > env > project > user > default)`,
    '',
    ...table,
    '',
    ...formatKey(input.key),
    'files (a later one wins over an earlier one):',
    ...files,
    '',
  ].join('\n');
};

/**
 * .what = the `bhrain config` command: the settings `act` (or `ask`, with --for ask) would run with in this directory,
 *         each with its source (flag, env:NAME, project:<file>, user:<file>, default); `-o json` for one object
 * .why = with flags, env vars and two kinds of files in play, a user must be able to see which one won. It accepts
 *        the settings flags of act, so the effect of a flag can be seen too; a bad settings file is exit 2 naming the key
 */
export const genConfigCommand = (context: ConfigCommandContext = {}): Command => {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const setExitCode = context.setExitCode ?? ((code: number) => void (process.exitCode = code));
  const command = new Command('config')
    .description(
      'show the settings act and ask would use here, and where each comes from (flag, env, .bhrain/settings.json, user settings, default)',
    )
    .option('--for <skill>', 'act or ask: the skill whose settings to show', 'act')
    .option(
      '-o, --output <format>',
      'text (a table) or json (one object: {schemaVersion, skill, cwd, settings, key, files, warnings})',
      'text',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ bhrain config\n  $ bhrain config --atom claude/sonnet -o json   # the effect of a flag\n  $ bhrain config --for ask',
    );
  // the settings flags of act, the same Option objects, so config accepts exactly what act accepts
  for (const option of genSkillCommand('act', async () => 0).options)
    if (settingOfAttribute(option.attributeName()) || option.attributeName() === 'trustProject') command.addOption(option);
  return command.action(async (options: { for: string; output: string; trustProject?: boolean }, self: Command) => {
    const json = options.output === 'json';
    try {
      if (!['text', 'json'].includes(options.output))
        throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
      if (!['act', 'ask'].includes(options.for)) throw new BadRequestError(`unknown --for '${options.for}': choose act or ask`);
      const skill = options.for as SkillName;
      const cwd = context.cwd ?? process.cwd();
      // loaded only now: `bhrain --help` stays fast
      const { resolveSkillSettings } = await import('./settings/resolveSkillSettings.js');
      const resolved = await resolveSkillSettings(
        { skill, flags: pickExplicitFlags(self), cwd, trustProject: !!options.trustProject },
        { env: context.env ?? process.env },
      );
      for (const warning of resolved.warnings) stderr.write(`bhrain config: warning: ${warning}\n`);
      const key = readKeySource(resolved.values.atom, context.env ?? process.env);
      if (json) {
        const settings = Object.fromEntries(
          SETTING_NAMES.map((key) => [settingFileKey(key), { value: resolved.values[key] ?? null, source: resolved.sources[key] }]),
        );
        stdout.write(
          `${JSON.stringify({ schemaVersion: CONFIG_OUTPUT_SCHEMA_VERSION, skill, cwd, settings, key, files: resolved.files, warnings: resolved.warnings })}\n`,
        );
      } else stdout.write(formatSettings(resolved, { skill, cwd, key }));
      setExitCode(EXIT_CODES.complete);
    } catch (error) {
      reportReadCommandFailure({ command: 'config', error, json }, { stdout, stderr, setExitCode });
    }
  });
};

import { readFileSync } from 'node:fs';

import { CommanderError, type Command } from 'commander';

import { didYouMean } from '../core/text/findNearestName.js';
import { EXIT_CODES } from './exitCodes.js';
import type { SkillName, SkillOptions } from './genSkillCommand.js';
import type { SkillSettingsFlags } from './settings/settingsTable.js';
import { genUsageErrorJson } from './skillOutputJson.js';

/** .what = the package's version, read once from its package.json (dist/cli/ → ../../package.json) */
export const BHRAIN_VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/**
 * .what = runs a skill, loading the heavy modules (SDKs, loop) only now, so --help stays fast
 * .note = act's sandbox probe (a bwrap process, ~15 ms) starts first and runs while those modules compile: runSkill
 *         awaits the same probe (checkBashSandbox keeps one per PATH) and reports its failure. A settings file that
 *         turns the sandbox off leaves it unused
 */
export const runSkillLazily = async (
  skill: SkillName,
  options: SkillOptions,
  prompt: string[],
  flags: SkillSettingsFlags,
): Promise<number> => {
  if (skill === 'act' && flags.sandbox !== 'off')
    import('../sandbox/checkBashSandbox.js').then(({ checkBashSandbox }) => checkBashSandbox({ env: process.env })).catch(() => {});
  const { runSkill } = await import('./runSkill.js');
  return runSkill(skill, options, prompt, flags);
};

/** .what = the --output value in an argv, as commander would read it (`-o json`, `--output=json`, `-ojson`) */
const findOutputFormat = (argv: readonly string[]): string | undefined => {
  for (let index = argv.length - 1; index >= 0; index--) {
    const arg = argv[index];
    if (arg === '--output' || arg === '-o') return argv[index + 1];
    const joined = /^(?:--output=|-o)(.+)$/.exec(arg);
    if (joined) return joined[1];
  }
  return undefined;
};

/** .what = a command and every command under it */
const withSubcommands = (command: Command): Command[] => [command, ...command.commands.flatMap(withSubcommands)];

/**
 * .what = makes a command's unknown option or subcommand a usage error that names the nearest one (edits, or a name cut
 *         short: `--max-budget` → `--max-budget-usd`), with the same matcher as settings keys and permission rules
 * .why = commander's own suggestion misses a name cut short and words differ from ours; its unknownOption and
 *        unknownCommand are the hooks it calls (commander is pinned, and the typo tests go through them)
 */
const suggestOnTypos = (command: Command): void => {
  const path: string[] = [];
  for (let each: Command | null = command; each; each = each.parent) path.unshift(each.name());
  const help = `(${path.join(' ')} --help lists them)`;
  Object.assign(command, {
    unknownOption: (flag: string) => {
      const name = flag.split('=')[0];
      const flags = command.options.filter((option) => !option.hidden).flatMap((option) => (option.long ? [option.long] : []));
      command.error(`error: unknown option '${name}': ${didYouMean(name, flags)}${help}`, { code: 'commander.unknownOption' });
    },
    unknownCommand: () => {
      const name = String(command.args[0]);
      const names = command.commands.flatMap((each) => [each.name(), ...each.aliases()]);
      command.error(`error: unknown command '${name}': ${didYouMean(name, names)}${help}`, { code: 'commander.unknownCommand' });
    },
  });
};

/**
 * .what = parses argv with a command, mapping usage errors to exit 2 and help or --version to exit 0
 * .why = commander exits 1 on a usage error; bhrain's contract is 2 for bad usage, and with --output json (or
 *        stream-json) stdout still gets one JSON object, so `> bhrain.json` never leaves an empty file
 */
export const parseSkillArgv = async (command: Command, argv: string[]): Promise<void> => {
  const commands = [command, ...command.commands];
  for (const each of commands) {
    each.exitOverride();
    each.version(BHRAIN_VERSION, '-V, --version', 'print the version');
  }
  for (const each of withSubcommands(command)) suggestOnTypos(each);
  try {
    await command.parseAsync(argv);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code)) {
      process.exitCode = EXIT_CODES.complete;
      return;
    }
    process.exitCode = EXIT_CODES.badRequest;
    const format = findOutputFormat(argv);
    if (format === 'json' || format === 'stream-json')
      process.stdout.write(`${JSON.stringify(genUsageErrorJson(error.message.replace(/^error: /, '')))}\n`);
  }
};

import { CommanderError, type Command } from 'commander';

import { EXIT_CODES } from './exitCodes.js';
import type { SkillName, SkillOptions } from './genSkillCommand.js';

/** .what = runs a skill, loading the heavy modules (SDKs, loop) only now, so --help stays fast */
export const runSkillLazily = async (skill: SkillName, options: SkillOptions): Promise<number> => {
  const { runSkill } = await import('./runSkill.js');
  return runSkill(skill, options);
};

/**
 * .what = parses argv with a command, mapping usage errors to exit 2 and help to exit 0
 * .why = commander exits 1 on a usage error; bhrain's contract is 2 for bad usage
 */
export const parseSkillArgv = async (command: Command, argv: string[]): Promise<void> => {
  const commands = [command, ...command.commands];
  for (const each of commands) each.exitOverride();
  try {
    await command.parseAsync(argv);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    process.exitCode = ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code)
      ? EXIT_CODES.complete
      : EXIT_CODES.badRequest;
  }
};

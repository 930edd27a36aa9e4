// the CLI reference (docs/cli-reference.md) names every flag of every command and every exit code
import type { Command } from 'commander';

/**
 * .what = each command's long flags, as commander defines them (hidden ones left out: rhachet's --repo, --role and
 *         --skill, which bhrain ignores), with --help and --version, which every command gets (parseSkillArgv)
 */
export const flagsOfCommands = (commands: Command[]): { command: string; flag: string }[] =>
  commands.flatMap((command) =>
    [...command.options.filter((option) => !option.hidden && option.long).map((option) => option.long!), '--help', '--version'].map(
      (flag) => ({ command: command.name(), flag }),
    ),
  );

/** .what = the flags a text never names: a flag counts only as a whole word, so `--output-file` does not name `--output` */
export const missingFlags = (text: string, flags: string[]): string[] =>
  [...new Set(flags)].filter((flag) => !new RegExp(`(?<![\\w-])${flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text));

/** .what = the exit codes that no row of the text's "Exit codes" section starts with (`| 7 | ...`) */
export const missingExitCodes = (text: string, codes: number[]): number[] => {
  const start = text.search(/^#{1,6} Exit codes$/m);
  const rest = start < 0 ? '' : text.slice(start).split('\n').slice(1).join('\n');
  const end = rest.search(/^#{1,6} /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...new Set(codes)].filter((code) => !new RegExp(`^\\| ${code} \\|`, 'm').test(section));
};

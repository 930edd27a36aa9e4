// `bhrain act ...` and `bhrain ask ...`: the same skills as the rhachet entries, without rhachet
import { Command } from 'commander';

import { genSkillCommand } from './genSkillCommand.js';
import { parseSkillArgv, runSkillLazily } from './runSkillEntry.js';

const program = new Command('bhrain')
  .description('bhrain: an agentic loop you control (act: change things; ask: read-only)')
  .addCommand(genSkillCommand('act', runSkillLazily))
  .addCommand(genSkillCommand('ask', runSkillLazily))
  .showHelpAfterError();
await parseSkillArgv(program, process.argv);

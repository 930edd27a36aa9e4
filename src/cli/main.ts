// `bhrain act ...` and `bhrain ask ...`: the same skills as the rhachet entries, without rhachet; plus the commands
// that read what runs left behind (runs, show, export), rewind (an act run's files put back), config: the resolved
// settings, skills and agents: the Agent Skills and agent files a run here would use, and mcp serve: bhrain as an MCP server
import './enableCompileCache.js';
import { Command } from 'commander';

import { genAgentsCommand, genAgentSkillsCommand } from './genAgentFilesCommands.js';
import { genAtomsCommand } from './genAtomsCommand.js';
import { genConfigCommand } from './genConfigCommand.js';
import { genExportCommand } from './genExportCommand.js';
import { genRewindCommand } from './genRewindCommand.js';
import { genRunsCommand } from './genRunsCommand.js';
import { genShowCommand } from './genShowCommand.js';
import { genSkillCommand } from './genSkillCommand.js';
import { genMcpCommand } from './mcp/serve/genMcpCommand.js';
import { parseSkillArgv, runSkillLazily } from './runSkillEntry.js';

const program = new Command('bhrain')
  .description('bhrain: an agentic loop you control (act: change things; ask: read-only)')
  .addCommand(genSkillCommand('act', runSkillLazily))
  .addCommand(genSkillCommand('ask', runSkillLazily))
  .addCommand(genRunsCommand())
  .addCommand(genShowCommand())
  .addCommand(genRewindCommand())
  .addCommand(genExportCommand())
  .addCommand(genConfigCommand())
  .addCommand(genAtomsCommand())
  .addCommand(genMcpCommand())
  .addCommand(genAgentSkillsCommand())
  .addCommand(genAgentsCommand())
  .addHelpText(
    'after',
    `
Examples:
  $ bhrain config                                      # the settings a run here uses, and the supplier key it reads
  $ bhrain ask "where is the retry policy defined?"    # read-only: the answer on stdout
  $ bhrain act "fix the failing test in src/math.test.ts"
  $ git diff | bhrain ask "review this diff" -o json   # piped stdin is context; one JSON object
  $ bhrain act --continue "now add a test for it"      # go on from the newest run here
  $ bhrain runs                                        # what ran here; bhrain show <id> for one
  $ bhrain rewind --dry-run                            # what undoing the newest act run here would put back
  $ bhrain act --help                                  # every flag of a run`,
  )
  .showHelpAfterError();
await parseSkillArgv(program, process.argv);

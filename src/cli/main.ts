// `bhrain act ...` and `bhrain ask ...`: the same skills as the rhachet entries, without rhachet; plus the commands
// that read what runs left behind (runs, show, export), config: the resolved settings, skills and agents: the Agent
// Skills and agent files a run here would use, and mcp serve: bhrain as an MCP server
import './enableCompileCache.js';
import { Command } from 'commander';

import { genAgentsCommand, genAgentSkillsCommand } from './genAgentFilesCommands.js';
import { genConfigCommand } from './genConfigCommand.js';
import { genExportCommand } from './genExportCommand.js';
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
  .addCommand(genExportCommand())
  .addCommand(genConfigCommand())
  .addCommand(genMcpCommand())
  .addCommand(genAgentSkillsCommand())
  .addCommand(genAgentsCommand())
  .showHelpAfterError();
await parseSkillArgv(program, process.argv);

// `bhrain mcp serve`: bhrain as an MCP server over stdio. Only the command's definition is here: the server (the MCP
// SDK, zod, the run) loads when `bhrain mcp serve` runs, never for another command
import { Command } from 'commander';

import { genSettingOption } from '../../genSkillCommand.js';
import { BHRAIN_VERSION } from '../../runSkillEntry.js';
import { SETTINGS, SETTING_NAMES, pickExplicitFlags, type SkillSettingsFlags } from '../../settings/settingsTable.js';
import type { McpServeOptions } from './McpServeOptions.js';

/** .what = the server itself, loaded only when `bhrain mcp serve` runs; resolves with its exit code once it closes */
const serveLazily = async (options: McpServeOptions, flags: SkillSettingsFlags): Promise<number> => {
  const { serveMcp } = await import('./serveMcp.js');
  return serveMcp(options, flags, { cwd: process.cwd(), version: BHRAIN_VERSION });
};

const SERVE_EXAMPLES = `
Examples:
  $ claude mcp add bhrain -- bhrain mcp serve --atom qwen           # Claude Code calls mcp__bhrain__ask, mcp__bhrain__act
  $ bhrain mcp serve --atom claude/haiku --root ~/src/app --max-budget-usd 0.50   # every call within ~/src/app, capped
  $ bhrain mcp serve --atom qwen --permission readOnly               # act's calls may only read, whatever the client asks`;

/**
 * .what = `bhrain mcp`, with its one subcommand `serve`: bhrain's skills (ask, act, continue) as MCP tools over stdio
 * .why = an MCP client (Claude Code, an IDE, another agent) delegates a task to bhrain with bhrain's own settings,
 *        sandbox, budgets, records and refs, as `bhrain ask|act` would run it
 */
export const genMcpCommand = (serve: (options: McpServeOptions, flags: SkillSettingsFlags) => Promise<number> = serveLazily) => {
  const command = new Command('serve')
    .description(
      'serve bhrain as an MCP server over stdio: tools ask (read-only), act and continue, run with these settings (docs/mcp.md#bhrain-as-an-mcp-server)',
    )
    .option('--root <dir>', "the directory every call's cwd must lie within (default: the server's working directory)");
  // the settings' flags, as act takes them: the defaults of every run the server hosts (a call may only tighten them)
  for (const key of SETTING_NAMES) {
    const option = genSettingOption(SETTINGS[key], 'act');
    if (option) command.addOption(option);
  }
  command
    .option(
      '--trust-project',
      "approve the projects of the calls' cwd for every run: their .bhrain/settings.json may loosen the sandbox, the network and the permission, and their MCP servers start",
    )
    .option('--no-subagents', 'act: do not offer the task tool (subagents)')
    .option('--no-record', 'write no run record for the runs')
    .option('--debug', 'show stacks of unexpected errors on stderr')
    .addHelpText('after', SERVE_EXAMPLES)
    .action(async (options: McpServeOptions, serveCommand: Command) => {
      process.exitCode = await serve(options, pickExplicitFlags(serveCommand));
    });
  // bhrain's contract for bad usage is exit 2: the nested command throws to parseSkillArgv as the top ones do
  command.exitOverride();
  return new Command('mcp').description('bhrain and MCP: `bhrain mcp serve` runs bhrain as an MCP server').addCommand(command);
};

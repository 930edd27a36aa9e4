import { Command, Option } from 'commander';

import { SETTINGS, SETTING_NAMES, type SettingRow, pickExplicitFlags, type SkillSettingsFlags } from './settings/settingsTable.js';

/** .what = the two skills: act may change things, ask only reads */
export type SkillName = 'act' | 'ask';

/** .what = the output formats of a skill run */
export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;

/**
 * .what = the parsed flags of a skill run that are not settings
 * .note = the settings flags (--atom, --max-iterations, ...) are made from the settings table and read through
 *         pickExplicitFlags, never from here
 */
export interface SkillOptions {
  arch: string;
  /** extended thinking: a budget of tokens, or off */
  thinking?: string;
  input?: string;
  /** -C: the working directory of the run, instead of the process's */
  cd?: string;
  /** -p: accepted as the peers' headless flag; every run prints its answer and exits */
  print?: boolean;
  failOnDenied?: boolean;
  /** false with --no-ci-integration: no GitHub Actions group, annotations or job summary */
  ciIntegration?: boolean;
  output: string;
  /** --output-file: the final result (the answer, or the result object) written to this file as well */
  outputFile?: string;
  includePartial?: boolean;
  jsonSchema?: string;
  onEpisode?: string;
  onSeries?: string;
  /** --continue: the series of the newest run recorded in this working directory that ended without error */
  continue?: boolean;
  /** --resume <run>: the series of the run this id, or its start or end, names (findRunById) */
  resume?: string;
  recordDir?: string;
  /** false with --no-record */
  record: boolean;
  systemPromptFile?: string;
  /** act: false with --no-subagents */
  subagents?: boolean;
  /** act: approve this run's project, so its files may loosen the sandbox, network and guard, and its MCP servers start */
  trustProject?: boolean;
  quiet?: boolean;
  debug?: boolean;
  /** --mcp-config, repeatable: MCP config files ({"mcpServers": {...}}) */
  mcpConfig?: string[];
  strictMcpConfig?: boolean;
  mcpRequired?: boolean;
  /** rhachet's own --skill, which it passes on to every skill it runs: its presence marks a run hosted by rhachet */
  skill?: string;
}

const EXAMPLES: Record<SkillName, string> = {
  act: `
Examples:
  $ bhrain act --atom claude/sonnet "fix the failing test in src/math.test.ts"
  $ echo "add a .gitignore for node" | bhrain act --atom qwen
  $ bhrain act --atom qwen --on-series 3f2a9c1e "now do it"            # continue a plan made by \`bhrain ask\`
  $ bhrain act --atom claude --permission rules.json --fail-on-denied -o json "..."   # rules: {"allow":["bash(npm test*)"],"deny":["bash(rm *)"]}
  $ bhrain act --atom qwen --max-budget-usd 0.50 --max-wall-time 10m "..." # stop at a spend or time cap (exit 6)
  $ bhrain act --atom qwen --allow-network "npm install, then fix the build" # bash may reach the network
  $ bhrain act --atom qwen --allow-domain registry.npmjs.org --allow-domain '*.github.com' "npm ci, then fix the build"  # only these hosts
  $ bhrain act --atom qwen --sandbox off "..."                         # bash unconfined (no bubblewrap, or macOS)
  $ bhrain act --atom qwen --mcp-config mcp.json "open an issue for the failing test"  # {"mcpServers":{"github":{"command":"npx","args":["-y","@modelcontextprotocol/server-github"]}}}
  $ bhrain act --atom qwen --append-system-prompt "reply in French" "..." # AGENTS.md / CLAUDE.md are read too, unless --no-project-instructions
  $ npx rhachet run --repo bhrain --skill act --atom qwen --input "..." # the same, through rhachet`,
  ask: `
Examples:
  $ bhrain ask --atom claude/haiku "where is the retry policy defined?"
  $ git diff | bhrain ask --atom qwen "review this diff" -o json      # piped stdin is context for the prompt
  $ bhrain ask --atom qwen --json-schema '{"type":"object","required":["files"]}' "which files define the loop?"
  $ bhrain ask --atom qwen -o stream-json "plan the refactor of src/loop" # one JSON event per line, live`,
};

/** .what = a setting's flag as a commander option for a skill, or null where the skill does not offer it */
export const genSettingOption = (setting: SettingRow, skill: SkillName): Option | null => {
  const { flag } = setting;
  if (!flag || (flag.skills && !flag.skills.includes(skill as 'act'))) return null;
  const option = new Option(flag.flags, typeof flag.help === 'string' ? flag.help : flag.help[skill]);
  const parse = flag.parse ?? ((text: string) => text);
  if (flag.repeatable) option.argParser((value: string, values: string[] = []) => [...values, parse(value)]);
  else if (flag.parse) option.argParser(parse);
  if (flag.shownInHelp !== undefined) option.default(flag.shownInHelp);
  return option;
};

/**
 * .what = the commander command for one skill, shared by `bhrain <skill>` and the rhachet skill entries
 * .why = one definition of the flags everywhere; the run itself is loaded only when a run happens (a fast --help)
 */
export const genSkillCommand = (
  skill: SkillName,
  run: (skill: SkillName, options: SkillOptions, prompt: string[], flags: SkillSettingsFlags) => Promise<number>,
): Command => {
  const command = new Command(skill)
    .description(
      skill === 'act'
        ? 'run the agent on a task with full tools (read, write, edit, glob, grep, bash, websearch)'
        : 'ask the agent a question with read-only tools (read, glob, grep, websearch); nothing is changed',
    )
    .argument('[prompt...]', 'the task (or give it with --input); piped stdin is added to it as context')
    .option('--arch <arch>', 'the brain architecture', 'bhrain.struct.v1');
  // the settings' flags, made from the settings table; ask runs no bash, so the network flags are act's
  for (const key of SETTING_NAMES) {
    const option = genSettingOption(SETTINGS[key], skill);
    if (option) command.addOption(option);
  }
  command
    .option(
      '--thinking <budget|off>',
      'let the model reason first, in up to this many tokens (claude: at least 1024, billed as output), or off',
    )
    .option(
      '-C, --cd <dir>',
      'run in this directory, as if started there: its settings, its repository, its files (as git -C and codex --cd)',
    )
    .option('-i, --input <text>', 'the task; without it and without a prompt argument, stdin is the task')
    // every run prints its answer and exits: -p is taken as the peers' headless flag, so `claude -p "…"` habits work
    .option('-p, --print', 'print the answer and exit, as every run does (the headless flag of Claude Code, Gemini CLI and Qwen Code)')
    .option('--fail-on-denied', 'exit 7 when any tool call was denied, even if the run completed')
    .option('--no-ci-integration', 'on GitHub Actions: no log group, annotations or job summary (also BHRAIN_CI_INTEGRATION=0)')
    .option(
      '--system-prompt-file <file>',
      "a file whose text is added at the end of bhrain's system prompt (before --append-system-prompt)",
    )
    .option(
      '--mcp-config <file>',
      skill === 'act'
        ? 'MCP servers to start, from a JSON file {"mcpServers": {...}} (repeatable); .mcp.json and the settings files are read too'
        : 'read and checked, but ask is read-only and starts no MCP server: bhrain cannot know what an MCP tool changes (use act with allow rules)',
      (file: string, files: string[] = []) => [...files, file],
    )
    .option('--strict-mcp-config', 'start only the MCP servers of the --mcp-config files (ignore .mcp.json and the settings files)')
    .option('--mcp-required', 'stop with exit 2, before any model request, when an MCP server does not start (default: go on without it)')
    .option('-o, --output <format>', 'text (the answer only, for pipes), json (one object), or stream-json (one event per line)', 'text')
    .option(
      '--output-file <path>',
      'write the final result to this file as well: the answer, or with --output json the result object (for rhachet, whose header precedes stdout)',
    )
    .option(
      '--include-partial',
      "stream-json: add the answer text as it streams (TextDelta events) and the model's reasoning (ReasoningDelta events)",
    )
    .option('--json-schema <json|file>', 'the answer must be JSON valid against this JSON Schema: retried once, then exit 8')
    .option('--on-episode <ref>', 'continue from a saved episode (a hash, a prefix, or @file from `bhrain export`)')
    .option('--on-series <ref>', 'continue a saved series (a hash, a prefix, or @file from `bhrain export`)')
    .option('--continue', 'continue the series of the newest run recorded in this working directory that ended without error')
    .option('--resume <run>', 'continue the series of a recorded run: its id from `bhrain runs`, or its start or end (`3c3451`)')
    .option('--record-dir <dir>', 'write the run record here instead of $BHRAIN_HOME/runs/<id>/')
    .option('--no-record', 'write no run record')
    .option('-q, --quiet', 'no progress, warnings or refs on stderr (errors still show)')
    .option('--debug', 'show stacks of unexpected errors')
    // rhachet passes its own flags through to the skill: --repo and --role are ignored, --skill marks a run rhachet hosts
    .addOption(new Option('--repo <slug>').hideHelp())
    .addOption(new Option('--role <slug>').hideHelp())
    .addOption(new Option('--skill <slug>').hideHelp())
    .addHelpText('after', EXAMPLES[skill])
    .action(async (prompt: string[], options: SkillOptions, command: Command) => {
      // only the flags given on the command line are a settings layer: commander's defaults must not mask the files
      process.exitCode = await run(skill, options, prompt, pickExplicitFlags(command));
    });
  if (skill === 'act')
    command.option(
      '--trust-project',
      'approve this repository\'s own files for this run: its .bhrain/settings.json may loosen the sandbox, the network and the permission, and its MCP servers start (as "trustedProjects" in your user settings does for good)',
    );
  // ask is read-only and answers itself: delegation is act's
  if (skill === 'act')
    command.option('--no-subagents', 'do not offer the task tool (explore, plan and general-purpose subagents in fresh contexts)');
  return command;
};

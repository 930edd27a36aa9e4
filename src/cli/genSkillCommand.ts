import { Command, Option } from 'commander';

import { pickExplicitFlags, type SkillSettingsFlags } from './settings/SkillSettings.js';

/** .what = the two skills: act may change things, ask only reads */
export type SkillName = 'act' | 'ask';

/** .what = the output formats of a skill run */
export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;

/** .what = the parsed flags of a skill run */
export interface SkillOptions {
  arch: string;
  atom?: string;
  model?: string;
  baseUrl?: string;
  /** extended thinking: a budget of tokens, or off */
  thinking?: string;
  input?: string;
  maxIterations?: string;
  maxBudgetUsd?: string;
  maxTokens?: string;
  maxWallTime?: string;
  timeoutMs?: string;
  permission?: string;
  failOnDenied?: boolean;
  sandbox?: string;
  allowNetwork?: boolean;
  /** act: --allow-domain, repeatable: the hosts bash may reach through bhrain's proxy */
  allowDomain?: string[];
  memory: string;
  output: string;
  /** --output-file: the final result (the answer, or the result object) written to this file as well */
  outputFile?: string;
  includePartial?: boolean;
  jsonSchema?: string;
  onEpisode?: string;
  onSeries?: string;
  recordDir?: string;
  /** false with --no-record */
  record: boolean;
  appendSystemPrompt?: string;
  systemPromptFile?: string;
  /** false with --no-project-instructions */
  projectInstructions: boolean;
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
    .option('--arch <arch>', 'the brain architecture', 'bhrain.struct.v1')
    .option('-a, --atom <slug>', 'the LLM: claude, claude/haiku, claude/sonnet, claude/opus, claude/claude-<id>, qwen, qwen/<model>')
    .option('-m, --model <id>', "any model id of the atom's supplier (an unknown id is warned about and its cost is null)")
    .option('--base-url <url>', "the supplier's endpoint (default: ANTHROPIC_BASE_URL / QWEN_BASE_URL, else the supplier's own)")
    .option(
      '--thinking <budget|off>',
      'let the model reason first, in up to this many tokens (claude: at least 1024, billed as output), or off',
    )
    .option('-i, --input <text>', 'the task; without it and without a prompt argument, stdin is the task')
    .option('--max-iterations <n>', 'stop after n loop iterations, printing the partial answer (exit 3)')
    .option('--max-budget-usd <usd>', 'stop before a request once the run has cost this much (exit 6)')
    .option('--max-tokens <n>', 'stop before a request once the run has used this many tokens, all kinds summed (exit 6)')
    .option('--max-wall-time <duration>', 'stop before a request once the run has lasted this long: 90s, 10m, 1h, or ms (exit 6)')
    .option('--timeout-ms <n>', 'LLM request timeout and the longest silence inside a streamed answer (default 600000 / 120000)')
    .option(
      '--permission <guard>',
      skill === 'act'
        ? 'allowAll (default), readOnly, promptForWrites, or a rules file (JSON: {allow, prompt, deny})'
        : 'ask is always readOnly',
    )
    .option('--fail-on-denied', 'exit 7 when any tool call was denied, even if the run completed')
    .option(
      '--sandbox <mode>',
      skill === 'act'
        ? 'where bash runs: workspace-write (default: only the working directory and a private /tmp are writable), read-only, or off (unconfined)'
        : 'ask is always read-only (only read-only is accepted)',
    )
    .option('--append-system-prompt <text>', "text added at the end of bhrain's system prompt")
    .option(
      '--system-prompt-file <file>',
      "a file whose text is added at the end of bhrain's system prompt (before --append-system-prompt)",
    )
    .option(
      '--no-project-instructions',
      'do not read AGENTS.md / CLAUDE.md (from the repository root down to here, and the user-level ones)',
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
    .option('--memory <strategy>', 'summarize-on-limit or truncate', 'summarize-on-limit')
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
    .option('--record-dir <dir>', 'write the run record here instead of $BHRAIN_HOME/runs/<id>/')
    .option('--no-record', 'write no run record')
    .option('-q, --quiet', 'no progress or refs on stderr (errors still show)')
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
  // ask runs no bash: the flag exists only where it can take effect
  if (skill === 'act') command.option('--allow-network', 'let bash reach the network (off in the sandbox by default)');
  if (skill === 'act')
    command.option(
      '--allow-domain <pattern>',
      "let bash reach this host, through bhrain's proxy (repeatable): api.example.com, or *.example.com for any subdomain (not example.com itself)",
      (pattern: string, patterns: string[] = []) => [...patterns, pattern],
    );
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

import { Command, Option } from 'commander';

/** .what = the two skills: act may change things, ask only reads */
export type SkillName = 'act' | 'ask';

/** .what = the parsed flags of a skill run */
export interface SkillOptions {
  arch: string;
  atom?: string;
  input?: string;
  maxIterations?: string;
  timeoutMs?: string;
  permission?: string;
  memory: string;
  output: string;
  onEpisode?: string;
  onSeries?: string;
  quiet?: boolean;
  debug?: boolean;
}

const EXAMPLES: Record<SkillName, string> = {
  act: `
Examples:
  $ bhrain act --atom claude/sonnet --input "fix the failing test in src/math.test.ts"
  $ echo "add a .gitignore for node" | bhrain act --atom qwen
  $ bhrain act --atom qwen --on-series 3f2a9c1e --input "now do it"     # continue a plan made by \`bhrain ask\`
  $ bhrain act --atom claude --permission rules.json --output json       # rules: {"allow":["bash(npm test*)"],"deny":["bash(rm *)"]}
  $ npx rhachet run --repo bhrain --skill act --atom qwen --input "..."  # the same, through rhachet`,
  ask: `
Examples:
  $ bhrain ask --atom claude/haiku --input "where is the retry policy defined?"
  $ git diff | bhrain ask --atom qwen --input "review this diff" --output json
  $ bhrain ask --atom qwen --input "plan the refactor of src/loop"      # prints refs; continue with --on-series`,
};

/**
 * .what = the commander command for one skill, shared by `bhrain <skill>` and the rhachet skill entries
 * .why = one definition of the flags everywhere; the run itself is loaded only when a run happens (a fast --help)
 */
export const genSkillCommand = (skill: SkillName, run: (skill: SkillName, options: SkillOptions) => Promise<number>): Command =>
  new Command(skill)
    .description(
      skill === 'act'
        ? 'run the agent on a task with full tools (read, write, edit, glob, grep, bash, websearch)'
        : 'ask the agent a question with read-only tools (read, glob, grep, websearch); nothing is changed',
    )
    .option('--arch <arch>', 'the brain architecture', 'bhrain.struct.v1')
    .option('--atom <slug>', 'the LLM: claude, claude/haiku, claude/sonnet, claude/opus, qwen, qwen/<model>')
    .option('--input <text>', 'the task; when absent, read from stdin (e.g. `echo task | bhrain act ...`)')
    .option('--max-iterations <n>', 'stop after n loop iterations, printing the partial answer (exit 3)')
    .option('--timeout-ms <n>', 'LLM request timeout and the longest silence inside a streamed answer (default 600000 / 120000)')
    .option(
      '--permission <guard>',
      skill === 'act' ? 'allowAll (default), readOnly, promptForWrites, or a rules file (JSON: {allow, prompt, deny})' : 'ask is always readOnly',
    )
    .option('--memory <strategy>', 'summarize-on-limit or truncate', 'summarize-on-limit')
    .option('--output <format>', 'text (the answer only, for pipes) or json (one object)', 'text')
    .option('--on-episode <ref>', 'continue from a saved episode (branch or revive)')
    .option('--on-series <ref>', 'continue a saved series')
    .option('--quiet', 'no progress on stderr (errors still show)')
    .option('--debug', 'show stacks of unexpected errors')
    // rhachet passes its own flags through to the skill: accepted and ignored
    .addOption(new Option('--repo <slug>').hideHelp())
    .addOption(new Option('--role <slug>').hideHelp())
    .addOption(new Option('--skill <slug>').hideHelp())
    .addHelpText('after', EXAMPLES[skill])
    .allowExcessArguments(false)
    .action(async (options: SkillOptions) => {
      process.exitCode = await run(skill, options);
    });

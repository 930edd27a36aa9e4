/**
 * .what = defaults that change bhrain.struct.v1's behaviour, in one place
 */

/** iterations before the loop stops with a partial answer */
export const DEFAULT_MAX_ITERATIONS = 50;

/** the most loop iterations a config may ask for (BhrainConfig.maxIterations, --max-iterations) */
export const MAX_ITERATIONS_LIMIT = 10_000;

/**
 * .what = the bounds of the values a config and the CLI's settings share: BhrainConfigSchema (the library's check) and
 *         the CLI's settings table (src/cli/settings/settingsTable.ts) both read them, so a bound is written once
 * .note = min and max are inclusive; above is not (maxBudgetUsd: any amount more than 0)
 */
export const BHRAIN_CONFIG_BOUNDS = {
  maxIterations: { integer: true, min: 1, max: MAX_ITERATIONS_LIMIT },
  maxTokens: { integer: true, min: 1 },
  maxBudgetUsd: { integer: false, above: 0 },
} as const;

/** every tool result longer than this is truncated (head and tail kept, full output spilled to disk) */
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 30_000;

/** a permission guard that has not decided by then is treated as a denial (fail closed) */
export const DEFAULT_GUARD_TIMEOUT_MS = 10_000;

/** how many tool calls of one turn run at once, at most (limits.maxConcurrentToolCalls) */
export const DEFAULT_MAX_CONCURRENT_TOOL_CALLS = 8;

/** identical consecutive calls after which the model is told it is looping */
export const RUNAWAY_REPEAT_COUNT = 3;

/** share of the context window at which the memory managers compact */
export const DEFAULT_COMPACT_AT_RATIO = 0.8;

/** tool results longer than this are condensed before they are summarized */
export const DEFAULT_CONDENSE_TOOL_RESULT_CHARS = 2_000;

/** the reply to an empty prompt: no loop is started */
export const CLARIFICATION_REQUEST =
  'Your request is empty. What would you like me to do? Describe the task, for example: "summarize readme.md" or "fix the failing test in src/foo.test.ts".';

/** what the model is told once when it answers with nothing */
export const EMPTY_ANSWER_NUDGE = '[bhrain: your last reply was empty. Continue the task with a tool call, or give your final answer.]';

/** bash runs in this sandbox unless told otherwise; a sandbox that cannot start refuses bash (fail closed) */
export const DEFAULT_BASH_SANDBOX_MODE = 'workspace-write' as const;

/**
 * the output bytes that all running bash calls of one toolbox may keep in memory together
 * .note = each kept byte is copied several times on its way to a result and a spill file: at 16 MB, 40 parallel floods
 *         peaked at 375-412 MB of RSS (the target is 400); at 8 MB, 262-308 MB
 */
export const DEFAULT_BASH_MAX_TOTAL_CAPTURE_BYTES = 8 * 1024 * 1024;

/** subagent nesting allowed when subagents are on: 1 = the session may spawn children, its children may not (docs/design/loop.md#subagents) */
export const DEFAULT_SUBAGENT_MAX_DEPTH = 1;

/** the deepest nesting a config may ask for: each level multiplies what one task can spend */
export const MAX_SUBAGENT_MAX_DEPTH = 5;

/** the name of the tool that spawns a subagent */
export const TASK_TOOL_NAME = 'task';

/** the Agent Skills tool: the model loads a skill's instructions (SKILL.md) by name */
export const SKILL_TOOL_NAME = 'skill';

/** the characters of the skill listing (names and descriptions) in the system prompt; skills past it are left out, with a notice */
export const SKILLS_LISTING_MAX_CHARS = 8_000;

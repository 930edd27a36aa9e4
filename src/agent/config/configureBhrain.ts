import { asBrainAtom } from '../../providers/asBrainAtom.js';
import { genBrainAtom } from '../../providers/genBrainAtom.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { CONFIG_CHECKED_BY_CALLER, type BhrainConfig, type BhrainConfigResolved } from './BhrainConfig.js';
import {
  DEFAULT_GUARD_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_TOOL_OUTPUT_CHARS,
  DEFAULT_SUBAGENT_MAX_DEPTH,
  SKILL_TOOL_NAME,
  TASK_TOOL_NAME,
} from '../constants.js';
import { genSummarizeOnLimit } from '../memory/genSummarizeOnLimit.js';
import { allowAll } from '../permission/builtinGuards.js';
import type { BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';
import { checkRuleTools } from '../permission/checkRuleTools.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genAgentSkillToolBox, isSkillToolBox } from '../agent-skills/genAgentSkillToolBox.js';
import { BUILTIN_SUBAGENTS } from '../subagents/builtinSubagents.js';
import type { BhrainSubagentsResolved, BhrainSubagentTypeResolved } from '../subagents/BhrainSubagentDefinition.js';
import { genToolRegistry } from '../tool/genToolRegistry.js';
import { genToolset } from '../toolboxes/genToolset.js';

/** .what = checks a config's shape, throwing a BadRequestError that names each bad field (BhrainConfigSchema.ts) */
type BhrainConfigValidator = (config: BhrainConfig) => void;
let validator: BhrainConfigValidator | null = null;

/**
 * .what = installs the check configureBhrain runs on every config; the package entry (src/index.ts) installs it
 * .why = the check is zod's, ~20 ms to load and run: the CLI, which builds its config from flags and settings it has
 *        already checked, does not load it (CONFIG_CHECKED_BY_CALLER); every library caller gets it
 */
export const setBhrainConfigValidator = (check: BhrainConfigValidator): void => {
  validator = check;
};

/** .what = the subagent types a config turns on: the built-in ones, with custom types added or replacing them by name */
const resolveSubagents = (config: BhrainConfig): BhrainSubagentsResolved | null => {
  if (!config.subagents) return null;
  const given = config.subagents === true ? {} : config.subagents;
  const types = new Map<string, BhrainSubagentTypeResolved>(Object.values(BUILTIN_SUBAGENTS).map((type) => [type.name, type]));
  const seen = new Set<string>();
  for (const custom of given.types ?? []) {
    if (seen.has(custom.name))
      throw new BadRequestError(`subagents.types names '${custom.name}' twice: each custom subagent type needs its own name`);
    seen.add(custom.name);
    if (custom.toolBoxes) genToolRegistry(custom.toolBoxes); // a tool offered twice fails here, not in the child
    if (custom.toolBoxes?.some((box) => box.definitions.some((definition) => definition.name === TASK_TOOL_NAME)))
      throw new BadRequestError(
        `subagent type '${custom.name}' offers a tool named '${TASK_TOOL_NAME}', which is the subagent tool's own name: rename that tool`,
      );
    if ([custom.toolBoxes, custom.toolNames, custom.inheritTools || undefined].filter((given) => given !== undefined).length > 1)
      throw new BadRequestError(
        `subagent type '${custom.name}' gives more than one of toolBoxes, toolNames and inheritTools: give toolBoxes (its own tools), toolNames (some of the parent's) or inheritTools (all the parent's)`,
      );
    types.set(custom.name, {
      name: custom.name,
      description: custom.description,
      systemPrompt: custom.systemPrompt,
      tools: custom.toolBoxes ?? (custom.toolNames ? { names: [...custom.toolNames] } : custom.inheritTools ? 'parent' : 'read-only'),
      atom:
        custom.atom === undefined ? null : typeof custom.atom === 'string' ? genBrainAtom({ slug: custom.atom }) : asBrainAtom(custom.atom),
    });
  }
  return { maxDepth: given.maxDepth ?? DEFAULT_SUBAGENT_MAX_DEPTH, types: [...types.values()] };
};

/**
 * .what = refuses a rules guard whose rules name no tool of these toolboxes (nor a built-in one), nor an MCP server of
 *         theirs (an MCP toolbox's `server`); the error names the guard as where the rules came from
 */
export const checkGuardRules = (guard: BhrainPermissionGuard, toolBoxes: readonly BhrainToolBox[]): void =>
  checkRuleTools({
    rules: guard.rules ?? [],
    toolNames: toolBoxes.flatMap((box) => box.definitions.map((definition) => definition.name)),
    mcpServers: toolBoxes.flatMap((box) => {
      const server = (box as { server?: unknown }).server;
      return typeof server === 'string' ? [server] : [];
    }),
    origin: `the guard '${guard.name}'`,
  });

/**
 * .what = validates a configuration and applies defaults, before any loop starts
 * .why = a bad config fails at configuration time with a message naming the field, never mid-run
 */
export const configureBhrain = (configGiven: BhrainConfig): BhrainConfigResolved => {
  // a rhachet brain atom runs as one of ours; anything that is neither kind fails here, saying what it lacks
  const config: BhrainConfig =
    typeof configGiven?.atom === 'object' ? { ...configGiven, atom: asBrainAtom(configGiven.atom) } : configGiven;
  if (validator) validator(config);
  else if (!config[CONFIG_CHECKED_BY_CALLER])
    throw new Error(
      'configureBhrain: no config check is installed; import bhrain from the package entry (rhachet-roles-bhrain), which installs it',
    );
  const atom = typeof config.atom === 'string' ? genBrainAtom({ slug: config.atom }) : asBrainAtom(config.atom);
  // fail closed: a USD cap over a model without a price could never stop the run
  if (config.limits?.maxBudgetUsd !== undefined && atom.spec.price === null)
    throw new BadRequestError(
      `the price of ${atom.spec.model} is unknown, so --max-budget-usd (limits.maxBudgetUsd) cannot be enforced; use a model with a known price, or cap the run with --max-tokens (limits.maxTokens) or --max-wall-time (limits.maxWallTimeMs) instead`,
    );
  const given = config.toolBoxes ?? genToolset({ access: 'all', sandbox: config.sandbox, permissionGuard: config.permissionGuard });
  const skills = [...(config.skills ?? [])];
  const named = new Set<string>();
  for (const skill of skills) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(skill.name))
      throw new BadRequestError(`skills: the name ${JSON.stringify(skill.name)} is not a skill name: 1-64 letters, digits, _ or -`);
    if (named.has(skill.name)) throw new BadRequestError(`skills names '${skill.name}' twice: each skill needs its own name`);
    named.add(skill.name);
  }
  if (
    skills.length &&
    given.some((box) => !isSkillToolBox(box) && box.definitions.some((definition) => definition.name === SKILL_TOOL_NAME))
  )
    throw new BadRequestError(
      `a toolbox offers a tool named '${SKILL_TOOL_NAME}', which Agent Skills (config.skills) need for themselves: rename that tool, or give no skills`,
    );
  // a config resolved again (the repl's per-call brains) replaces its skill tool, never doubles it
  const toolBoxes = skills.length ? [...given.filter((box) => !isSkillToolBox(box)), genAgentSkillToolBox({ skills })] : given;
  genToolRegistry(toolBoxes); // fails on a tool name offered twice, a skill named twice too
  const subagents = resolveSubagents(config);
  if (subagents && toolBoxes.some((box) => box.definitions.some((definition) => definition.name === TASK_TOOL_NAME)))
    throw new BadRequestError(
      `a toolbox offers a tool named '${TASK_TOOL_NAME}', which subagents (config.subagents) need for themselves: rename that tool, or turn subagents off`,
    );
  // a rule that names no tool of the run is refused now; the CLI checks its own, with the MCP servers it starts later
  if (config.permissionGuard?.rules?.length && !config[CONFIG_CHECKED_BY_CALLER])
    checkGuardRules(config.permissionGuard, [
      ...toolBoxes,
      ...(subagents?.types.flatMap((type) => (Array.isArray(type.tools) ? type.tools : [])) ?? []),
    ]);
  // fail closed, as for the parent: a child on an unpriced atom could spend past a USD cap unseen
  const unpriced = subagents?.types.find((type) => type.atom && type.atom.spec.price === null);
  if (config.limits?.maxBudgetUsd !== undefined && unpriced)
    throw new BadRequestError(
      `the price of ${unpriced.atom!.spec.model} (subagent type '${unpriced.name}') is unknown, so --max-budget-usd (limits.maxBudgetUsd) cannot be enforced over its spend; give that subagent a model with a known price, or cap the run with --max-tokens (limits.maxTokens) or --max-wall-time (limits.maxWallTimeMs) instead`,
    );
  return {
    uuid: config.uuid ?? null,
    atom,
    toolBoxes,
    memoryManager: config.memoryManager ?? genSummarizeOnLimit(),
    permissionGuard: config.permissionGuard ?? allowAll,
    maxIterations: config.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    systemPrompt: config.systemPrompt ?? null,
    baseSystemPrompt: config.baseSystemPrompt ?? null,
    instructions: config.instructions?.trim() ? config.instructions : null,
    gitStatus: config.gitStatus ?? false,
    limits: {
      contextTokens: Math.min(config.limits?.contextTokens ?? atom.spec.contextWindowTokens, atom.spec.contextWindowTokens),
      maxToolOutputChars: config.limits?.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS,
      guardTimeoutMs: config.limits?.guardTimeoutMs ?? DEFAULT_GUARD_TIMEOUT_MS,
      maxConcurrentToolCalls: config.limits?.maxConcurrentToolCalls ?? DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
      maxBudgetUsd: config.limits?.maxBudgetUsd,
      maxTokens: config.limits?.maxTokens,
      maxWallTimeMs: config.limits?.maxWallTimeMs,
    },
    subagents,
    skills,
    // an event with no hook is left out: the session loads the hook runner only when one is there to run
    hooks: Object.values(config.hooks ?? {}).some((list) => list?.length) ? config.hooks! : null,
  };
};

import { createHash } from 'node:crypto';

import { genBrainAtom } from '../providers/genBrainAtom.js';
import type { BrainAtom } from '../core/contract/BrainAtom.js';
import { BadRequestError } from '../core/contract/errors.js';
import {
  DEFAULT_GUARD_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_TOOL_OUTPUT_CHARS,
  DEFAULT_SUBAGENT_MAX_DEPTH,
  TASK_TOOL_NAME,
} from './constants.js';
import type { BhrainBudget } from './session/checkBudget.js';
import type { BhrainMemoryManager } from './memory/BhrainMemoryManager.js';
import { genSummarizeOnLimit } from './memory/genSummarizeOnLimit.js';
import { allowAll } from './permission/builtinGuards.js';
import type { BhrainPermissionGuard } from './permission/BhrainPermissionGuard.js';
import { BUILTIN_SUBAGENTS } from './subagents/builtinSubagents.js';
import type { BhrainSubagentsConfig, BhrainSubagentsResolved, BhrainSubagentTypeResolved } from './subagents/BhrainSubagentDefinition.js';
import type { BhrainToolBox } from './tool/BhrainToolBox.js';
import type { BashSandbox } from '../sandbox/BashSandbox.js';
import type { ReadDenial } from '../sandbox/resolveHiddenPaths.js';
import { genToolRegistry } from './tool/genToolRegistry.js';
import { genBashToolBox } from './tools/bash/genBashToolBox.js';
import { genFilesToolBox } from './tools/files/genFilesToolBox.js';
import { genWebsearchToolBox } from './tools/websearch/genWebsearchToolBox.js';

/**
 * .what = the limits a session works within
 * .note = the budget (maxBudgetUsd, maxTokens, maxWallTimeMs) is checked before every request to the model; at a cap the
 *         session ends with termination 'budget' and its partial answer; absent = no cap
 */
export interface BhrainLimits extends BhrainBudget {
  /** the context window to stay within; the atom's window when absent */
  contextTokens: number;
  /** every tool result longer than this is truncated, the full output spilled to disk */
  maxToolOutputChars: number;
  /** a guard that has not decided by then denies */
  guardTimeoutMs: number;
  /** the tool calls of one turn that run at once, at most */
  maxConcurrentToolCalls: number;
}

/**
 * .what = the configuration of a bhrain.struct.v1 brain, as a caller writes it
 * .note = absent plugins get defaults: files + bash + websearch toolboxes, summarize-on-limit memory, allowAll guard;
 *         an explicit empty toolBoxes list means no tools
 */
export interface BhrainConfig {
  uuid?: string;
  /** an atom, or its slug: claude, claude/sonnet, qwen, qwen/<model> */
  atom: BrainAtom | string;
  toolBoxes?: BhrainToolBox[];
  memoryManager?: BhrainMemoryManager;
  permissionGuard?: BhrainPermissionGuard;
  maxIterations?: number;
  /** appended to bhrain's system prompt, after the project instructions */
  systemPrompt?: string;
  /**
   * the project's instructions, put in the system prompt in a <project-instructions> block, so no compaction removes them;
   * `(await loadProjectInstructions({ cwd })).text` reads AGENTS.md and CLAUDE.md as the CLI does. Absent = none: the
   * library reads no instruction file by itself
   */
  instructions?: string;
  /**
   * true: the system prompt states the git repository the cwd is in, its branch and how dirty the tree is (counts only),
   * from one `git status` call at the start of each session (1 s at most, skipped outside a repository or without git).
   * Absent = false: the library runs no process of its own unless asked
   */
  gitStatus?: boolean;
  limits?: Partial<BhrainLimits>;
  /**
   * where the default bash toolbox runs commands: { mode: 'workspace-write' (default) | 'read-only' | 'off', allowNetwork,
   * allowedDomains (the hosts bash may reach through bhrain's proxy), domainProxy (that proxy, to read its audit) }, and
   * what the default toolboxes hide from the model besides the credential stores and $BHRAIN_HOME (denyRead) or hand back
   * (allowRead, with the permission guard's own allowRead)
   * .note = with toolBoxes of your own, give it to genBashToolBox({ sandbox }) and genFilesToolBox(denial) instead
   */
  sandbox?: BashSandbox;
  /**
   * the task tool, which spawns subagents (child sessions with a fresh context): true for explore, plan and
   * general-purpose with a depth limit of 1, or { maxDepth, types } with custom types. Absent = off (the CLI's act turns it on)
   */
  subagents?: boolean | BhrainSubagentsConfig;
  /** set by the CLI only: every value was checked where it was read (see CONFIG_CHECKED_BY_CALLER) */
  [CONFIG_CHECKED_BY_CALLER]?: true;
}

/** .what = a configuration with every default applied and validated */
export interface BhrainConfigResolved {
  uuid: string | null;
  atom: BrainAtom;
  toolBoxes: BhrainToolBox[];
  memoryManager: BhrainMemoryManager;
  permissionGuard: BhrainPermissionGuard;
  maxIterations: number;
  systemPrompt: string | null;
  instructions: string | null;
  gitStatus: boolean;
  limits: BhrainLimits;
  /** null = no task tool */
  subagents: BhrainSubagentsResolved | null;
}

/**
 * .what = what the default toolboxes hide beyond the defaults, and hand back: the config's sandbox.denyRead, and its
 *         sandbox.allowRead with the paths the permission guard's rules hand back (`read(~/.npmrc)`)
 * .why = the files toolbox and the bash sandbox hide the same paths, and a rule the user wrote opens a path in both
 */
export const readDenialOf = (config: Pick<BhrainConfig, 'sandbox' | 'permissionGuard'>): ReadDenial => ({
  denyRead: config.sandbox?.denyRead ?? [],
  allowRead: [...(config.sandbox?.allowRead ?? []), ...(config.permissionGuard?.allowRead ?? [])],
});

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

/**
 * .what = marks a config whose every value its caller has already checked, so configureBhrain skips the shape check
 * .why = only the CLI sets it, on a config it builds from checked flags and settings; a config with neither this mark nor
 *        an installed check is refused, so no other path runs unchecked
 */
export const CONFIG_CHECKED_BY_CALLER: unique symbol = Symbol('bhrain.configCheckedByCaller');

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
    types.set(custom.name, {
      name: custom.name,
      description: custom.description,
      systemPrompt: custom.systemPrompt,
      tools: custom.toolBoxes ?? 'read-only',
      atom: custom.atom === undefined ? null : typeof custom.atom === 'string' ? genBrainAtom({ slug: custom.atom }) : custom.atom,
    });
  }
  return { maxDepth: given.maxDepth ?? DEFAULT_SUBAGENT_MAX_DEPTH, types: [...types.values()] };
};

/** .what = a value with its keys sorted at every level, so JSON.stringify gives one text per meaning */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
        )
      : value;

/**
 * .what = the configUuid of a session (seed 002 Bhrain.Session): a sha256 over the resolved config's canonical JSON, shaped
 *         as a uuid (the first 32 hex digits, 8-4-4-4-12)
 * .why = equal configs give equal uuids, across processes, so sessions can be grouped by the config they ran with; the
 *        plugins are hashed by what identifies them (atom slug and model, toolbox names and tool definitions, the
 *        guard's and memory manager's names, the subagent types), never by their code
 */
export const hashBhrainConfig = (config: BhrainConfigResolved, toolBoxes: readonly BhrainToolBox[] = config.toolBoxes): string => {
  const boxes = (list: readonly BhrainToolBox[]) => list.map((box) => ({ name: box.name, definitions: box.definitions }));
  const identity = {
    uuid: config.uuid,
    atom: { slug: config.atom.slug, model: config.atom.spec.model },
    toolBoxes: boxes(toolBoxes),
    memoryManager: config.memoryManager.name,
    permissionGuard: config.permissionGuard.name,
    maxIterations: config.maxIterations,
    systemPrompt: config.systemPrompt,
    instructions: config.instructions,
    gitStatus: config.gitStatus,
    limits: config.limits,
    subagents: config.subagents && {
      maxDepth: config.subagents.maxDepth,
      types: config.subagents.types.map((type) => ({
        name: type.name,
        description: type.description,
        systemPrompt: type.systemPrompt,
        tools: typeof type.tools === 'string' ? type.tools : boxes(type.tools),
        atom: type.atom?.slug ?? null,
      })),
    },
  };
  const hex = createHash('sha256')
    .update(JSON.stringify(canonical(identity)))
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

/**
 * .what = validates a configuration and applies defaults, before any loop starts
 * .why = a bad config fails at configuration time with a message naming the field, never mid-run
 */
export const configureBhrain = (config: BhrainConfig): BhrainConfigResolved => {
  if (validator) validator(config);
  else if (!config[CONFIG_CHECKED_BY_CALLER])
    throw new Error(
      'configureBhrain: no config check is installed; import bhrain from the package entry (rhachet-roles-bhrain), which installs it',
    );
  const atom = typeof config.atom === 'string' ? genBrainAtom({ slug: config.atom }) : config.atom;
  // fail closed: a USD cap over a model without a price could never stop the run
  if (config.limits?.maxBudgetUsd !== undefined && atom.spec.price === null)
    throw new BadRequestError(
      `the price of ${atom.spec.model} is unknown, so --max-budget-usd (limits.maxBudgetUsd) cannot be enforced; use a model with a known price, or cap the run with --max-tokens (limits.maxTokens) or --max-wall-time (limits.maxWallTimeMs) instead`,
    );
  const denial = readDenialOf(config);
  const toolBoxes = config.toolBoxes ?? [
    genFilesToolBox(denial),
    genBashToolBox({ sandbox: { ...config.sandbox, ...denial } }),
    genWebsearchToolBox(),
  ];
  genToolRegistry(toolBoxes); // fails on a tool name offered twice
  const subagents = resolveSubagents(config);
  if (subagents && toolBoxes.some((box) => box.definitions.some((definition) => definition.name === TASK_TOOL_NAME)))
    throw new BadRequestError(
      `a toolbox offers a tool named '${TASK_TOOL_NAME}', which subagents (config.subagents) need for themselves: rename that tool, or turn subagents off`,
    );
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
  };
};

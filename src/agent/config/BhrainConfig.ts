import { createHash } from 'node:crypto';

import type { BrainAtom } from '../../core/contract/BrainAtom.js';
import type { RhachetSupplierAtom } from '../../rhachet/contract/RhachetSupplierAtom.js';
import type { BhrainBudget } from '../session/checkBudget.js';
import type { BhrainMemoryManager } from '../memory/BhrainMemoryManager.js';
import type { BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';
import type { BhrainAgentSkill } from '../agent-skills/BhrainAgentSkill.js';
import type { BhrainSubagentsConfig, BhrainSubagentsResolved } from '../subagents/BhrainSubagentDefinition.js';
import type { BhrainHooks } from '../hooks/BhrainHook.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import type { BashSandbox } from '../../sandbox/BashSandbox.js';

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
  /** an atom, or its slug: claude, claude/sonnet, qwen, qwen/<model>, openai, openai/<model>; or a rhachet brain atom */
  atom: BrainAtom | RhachetSupplierAtom | string;
  toolBoxes?: BhrainToolBox[];
  memoryManager?: BhrainMemoryManager;
  permissionGuard?: BhrainPermissionGuard;
  maxIterations?: number;
  /** appended to bhrain's system prompt, after the project instructions */
  systemPrompt?: string;
  /**
   * replaces bhrain's own opening of the system prompt (who the agent is, where it works, how to use its tools); the
   * project instructions, the Agent Skills listing and systemPrompt still follow. A subagent keeps its type's prompt
   */
  baseSystemPrompt?: string;
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
   * allowedDomains (the hosts bash may reach through bhrain's proxy), domainProxy (that proxy, to read its audit),
   * allowUnixSockets (the host's unix sockets bash may reach; none by default) }, and
   * what the default toolboxes hide from the model besides the credential stores and $BHRAIN_HOME (denyRead) or hand back
   * (allowRead, with the permission guard's own allowRead)
   * .note = with toolBoxes of your own, give it to genBashToolBox({ sandbox }) and genFilesToolBox(denial), or genToolset, instead
   */
  sandbox?: BashSandbox;
  /**
   * the task tool, which spawns subagents (child sessions with a fresh context): true for explore, plan and
   * general-purpose with a depth limit of 1, or { maxDepth, types } with custom types. Absent = off (the CLI's act turns it on)
   */
  subagents?: boolean | BhrainSubagentsConfig;
  /**
   * Agent Skills (SKILL.md): their names and descriptions are listed in the system prompt (within a fixed budget), and
   * the skill tool (effect read) loads a skill's instructions when the model chooses it. `(await loadAgentSkills({ cwd
   * })).skills` finds them as the CLI does. Absent or empty = no skill tool
   */
  skills?: readonly BhrainAgentSkill[];
  /**
   * hooks by event, as functions over Claude Code's hook input that answer Claude Code's hook output (docs/hooks.md):
   * { PreToolUse: [{ name, matcher: 'bash', run: (input) => ... }] }. Absent = none (no hook code is loaded)
   */
  hooks?: BhrainHooks;
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
  baseSystemPrompt: string | null;
  instructions: string | null;
  gitStatus: boolean;
  limits: BhrainLimits;
  /** null = no task tool */
  subagents: BhrainSubagentsResolved | null;
  /** [] = no skill tool */
  skills: readonly BhrainAgentSkill[];
  /** null = no hooks (absent, or every event's list empty) */
  hooks: BhrainHooks | null;
}

/**
 * .what = marks a config whose every value its caller has already checked, so configureBhrain skips the shape check
 * .why = only the CLI sets it, on a config it builds from checked flags and settings; a config with neither this mark nor
 *        an installed check is refused, so no other path runs unchecked
 */
export const CONFIG_CHECKED_BY_CALLER: unique symbol = Symbol('bhrain.configCheckedByCaller');

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
 * .what = the configUuid of a session (docs/design/loop.md#config-and-plugins): a sha256 over the resolved config's canonical JSON, shaped
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
    baseSystemPrompt: config.baseSystemPrompt,
    instructions: config.instructions,
    gitStatus: config.gitStatus,
    limits: config.limits,
    hooks:
      config.hooks && Object.fromEntries(Object.entries(config.hooks).map(([event, hooks]) => [event, hooks!.map((hook) => hook.name)])),
    subagents: config.subagents && {
      maxDepth: config.subagents.maxDepth,
      types: config.subagents.types.map((type) => ({
        name: type.name,
        description: type.description,
        systemPrompt: type.systemPrompt,
        tools: typeof type.tools === 'string' ? type.tools : 'names' in type.tools ? { names: type.tools.names } : boxes(type.tools),
        atom: type.atom?.slug ?? null,
      })),
    },
    skills: config.skills.map((skill) => ({ name: skill.name, description: skill.description, path: skill.path })),
  };
  const hex = createHash('sha256')
    .update(JSON.stringify(canonical(identity)))
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

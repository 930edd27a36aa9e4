import { z } from 'zod';

import { genBrainAtom } from '../../atoms/genBrainAtom.js';
import type { BrainAtom } from '../../contract/BrainAtom.js';
import { BadRequestError } from '../../contract/errors.js';
import { DEFAULT_GUARD_TIMEOUT_MS, DEFAULT_MAX_CONCURRENT_TOOL_CALLS, DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_TOOL_OUTPUT_CHARS } from './constants.js';
import type { BhrainBudget } from './loop/checkBudget.js';
import type { BhrainMemoryManager } from './memory/BhrainMemoryManager.js';
import { genSummarizeOnLimit } from './memory/genSummarizeOnLimit.js';
import { allowAll } from './permission/builtinGuards.js';
import type { BhrainPermissionGuard } from './permission/BhrainPermissionGuard.js';
import type { BhrainToolBox } from './tools/BhrainToolBox.js';
import { BASH_SANDBOX_MODES, type BashSandbox } from './tools/bash/BashSandbox.js';
import { genToolRegistry } from './tools/genToolRegistry.js';
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
   * where the default bash toolbox runs commands: { mode: 'workspace-write' (default) | 'read-only' | 'off', allowNetwork }
   * .note = with toolBoxes of your own, give it to genBashToolBox({ sandbox }) instead
   */
  sandbox?: BashSandbox;
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
}

const fn = (what: string) => z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', `${what} must be a function`);
const schemaToolBox = z.object({
  name: z.string().min(1, 'a toolbox needs a name'),
  definitions: z.array(
    z.object({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a tool name is 1-64 letters, digits, _ or -'),
      description: z.string(),
      inputSchema: z.object({ type: z.literal('object') }).loose(),
    }),
  ),
  execute: fn('toolbox.execute'),
});
const schemaConfig = z.object({
  uuid: z.string().optional(),
  atom: z.union([
    z.string().min(1),
    z.object({ slug: z.string(), generate: fn('atom.generate'), spec: z.object({ contextWindowTokens: z.number() }).loose() }).loose(),
  ]),
  toolBoxes: z.array(schemaToolBox).optional(),
  memoryManager: z
    .object({ name: z.string(), shouldUpdate: fn('memoryManager.shouldUpdate'), getUpdate: fn('memoryManager.getUpdate') })
    .loose()
    .optional(),
  permissionGuard: z.object({ name: z.string(), check: fn('permissionGuard.check') }).loose().optional(),
  maxIterations: z.number().int('maxIterations must be a whole number').min(1).max(10_000).optional(),
  systemPrompt: z.string().optional(),
  instructions: z.string({ error: 'instructions must be a string: the text of the project instructions, e.g. (await loadProjectInstructions({ cwd })).text' }).optional(),
  gitStatus: z.boolean({ error: 'gitStatus must be true or false' }).optional(),
  sandbox: z
    .object({
      mode: z.enum(BASH_SANDBOX_MODES, { error: `sandbox.mode must be one of ${BASH_SANDBOX_MODES.join(', ')}` }).optional(),
      allowNetwork: z.boolean().optional(),
    })
    .strict()
    .optional(),
  limits: z
    .object({
      contextTokens: z.number().int().min(1_000).optional(),
      maxToolOutputChars: z.number().int().min(1_000).optional(),
      guardTimeoutMs: z.number().int().min(1).optional(),
      maxConcurrentToolCalls: z.number().int().min(1).optional(),
      maxBudgetUsd: z.number({ error: 'limits.maxBudgetUsd must be a number of US dollars' }).positive('limits.maxBudgetUsd must be more than 0 US dollars').finite().optional(),
      maxTokens: z.number({ error: 'limits.maxTokens must be a number of tokens' }).int('limits.maxTokens must be a whole number of tokens').positive('limits.maxTokens must be at least 1').optional(),
      maxWallTimeMs: z.number({ error: 'limits.maxWallTimeMs must be a number of milliseconds' }).positive('limits.maxWallTimeMs must be more than 0 ms').finite().optional(),
    })
    .strict()
    .optional(),
}).strict();

/**
 * .what = validates a configuration and applies defaults, before any loop starts
 * .why = a bad config fails at configuration time with a message naming the field, never mid-run
 */
export const configureBhrain = (config: BhrainConfig): BhrainConfigResolved => {
  const parsed = schemaConfig.safeParse(config);
  if (!parsed.success) throw new BadRequestError(`invalid bhrain.struct.v1 config:\n${z.prettifyError(parsed.error)}`);
  const atom = typeof config.atom === 'string' ? genBrainAtom({ slug: config.atom }) : config.atom;
  // fail closed: a USD cap over a model without a price could never stop the run
  if (config.limits?.maxBudgetUsd !== undefined && atom.spec.price === null)
    throw new BadRequestError(
      `the price of ${atom.spec.model} is unknown, so --max-budget-usd (limits.maxBudgetUsd) cannot be enforced; use a model with a known price, or cap the run with --max-tokens (limits.maxTokens) or --max-wall-time (limits.maxWallTimeMs) instead`,
    );
  const toolBoxes = config.toolBoxes ?? [genFilesToolBox(), genBashToolBox({ sandbox: config.sandbox }), genWebsearchToolBox()];
  genToolRegistry(toolBoxes); // fails on a tool name offered twice
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
  };
};

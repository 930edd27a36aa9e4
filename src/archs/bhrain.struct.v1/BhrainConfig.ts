import { z } from 'zod';

import { genBrainAtom } from '../../atoms/genBrainAtom.js';
import type { BrainAtom } from '../../contract/BrainAtom.js';
import { BadRequestError } from '../../contract/errors.js';
import { DEFAULT_GUARD_TIMEOUT_MS, DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_TOOL_OUTPUT_CHARS } from './constants.js';
import type { BhrainMemoryManager } from './memory/BhrainMemoryManager.js';
import { genSummarizeOnLimit } from './memory/genSummarizeOnLimit.js';
import { allowAll } from './permission/builtinGuards.js';
import type { BhrainPermissionGuard } from './permission/BhrainPermissionGuard.js';
import type { BhrainToolBox } from './tools/BhrainToolBox.js';
import { genToolRegistry } from './tools/genToolRegistry.js';
import { genBashToolBox } from './tools/bash/genBashToolBox.js';
import { genFilesToolBox } from './tools/files/genFilesToolBox.js';
import { genWebsearchToolBox } from './tools/websearch/genWebsearchToolBox.js';

/** .what = the limits a session works within */
export interface BhrainLimits {
  /** the context window to stay within; the atom's window when absent */
  contextTokens: number;
  /** every tool result longer than this is truncated, the full output spilled to disk */
  maxToolOutputChars: number;
  /** a guard that has not decided by then denies */
  guardTimeoutMs: number;
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
  systemPrompt?: string;
  limits?: Partial<BhrainLimits>;
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
  limits: z
    .object({
      contextTokens: z.number().int().min(1_000).optional(),
      maxToolOutputChars: z.number().int().min(1_000).optional(),
      guardTimeoutMs: z.number().int().min(1).optional(),
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
  const toolBoxes = config.toolBoxes ?? [genFilesToolBox(), genBashToolBox(), genWebsearchToolBox()];
  genToolRegistry(toolBoxes); // fails on a tool name offered twice
  return {
    uuid: config.uuid ?? null,
    atom,
    toolBoxes,
    memoryManager: config.memoryManager ?? genSummarizeOnLimit(),
    permissionGuard: config.permissionGuard ?? allowAll,
    maxIterations: config.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    systemPrompt: config.systemPrompt ?? null,
    limits: {
      contextTokens: Math.min(config.limits?.contextTokens ?? atom.spec.contextWindowTokens, atom.spec.contextWindowTokens),
      maxToolOutputChars: config.limits?.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS,
      guardTimeoutMs: config.limits?.guardTimeoutMs ?? DEFAULT_GUARD_TIMEOUT_MS,
    },
  };
};

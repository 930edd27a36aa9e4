import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainToolCall, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import type { BhrainSubagent } from '../BhrainSession.js';

/**
 * .what = the output of one tool execution, which the model reads
 * .why = a failure is a result (success false) with an explanation, never an exception that ends the loop
 */
export interface BhrainToolResult {
  callId: string;
  success: boolean;
  output: string;
  /** set by the truncation policy when the output was cut */
  truncated?: boolean;
  /** where the full, uncut output was kept, so the model can page it with read */
  fullOutputPath?: string;
  /** for bash: the process exit code (null when killed by a signal or a timeout) */
  exitCode?: number | null;
}

/** .what = what a tool execution may use: where it runs, how to log, when to stop */
export interface BhrainToolContext {
  /** the working directory: relative paths resolve here, bash runs here */
  cwd: string;
  log: BrainLog;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** where the session spills truncated outputs: the files tools may read it even inside a hidden path ($BHRAIN_HOME) */
  spillDir?: string;
  /** the session's redactor: the environment's secrets and the repository's git credentials (bash redacts what it cuts) */
  redact?: SecretRedactor;
  /**
   * runs a subagent of the calling session (seed 002 §5.3): a child session of a configured type, with a fresh context,
   * the same budget, approvals, signal and prompter; present when config.subagents is on and the session is below
   * subagents.maxDepth. The task tool spawns through it; so may a tool of your own
   */
  spawn?: BhrainSpawn;
}

/** .what = what a tool asks of spawn: which subagent type, the whole task, a short label, and the call it serves */
export interface BhrainSpawnRequest {
  /** a type of config.subagents: explore, plan, general-purpose, or a custom one */
  type: string;
  /** the task, with everything the subagent needs to know: it sees none of the parent's conversation */
  prompt: string;
  /** a short label, 3-5 words */
  description: string;
  /** the tool call it serves (in SubagentStarted and SubagentCompleted) */
  callId: string;
}

/** .what = a spawned subagent's end: whether it answered, what the parent's model should read, and the subagent entity */
export interface BhrainSpawned {
  success: boolean;
  /** its answer when it completed; why it failed and what it said before, when it did not */
  output: string;
  subagent: BhrainSubagent;
}

/** .what = the spawn capability of a tool context: runs one subagent to its end; never throws for the child's failures */
export type BhrainSpawn = (request: BhrainSpawnRequest) => Promise<BhrainSpawned>;

/**
 * .what = a named collection of tools: their model-facing definitions and one executor
 * .why = the plugin unit of capability; boxes compose, and can be added or removed at runtime
 */
export interface BhrainToolBox {
  name: string;
  definitions: readonly BrainToolDefinition[];
  execute: (input: { call: BrainToolCall }, context: BhrainToolContext) => Promise<BhrainToolResult>;
}

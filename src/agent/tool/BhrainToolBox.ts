import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainToolCall, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';

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
}

/**
 * .what = a named collection of tools: their model-facing definitions and one executor
 * .why = the plugin unit of capability; boxes compose, and can be added or removed at runtime
 */
export interface BhrainToolBox {
  name: string;
  definitions: readonly BrainToolDefinition[];
  execute: (input: { call: BrainToolCall }, context: BhrainToolContext) => Promise<BhrainToolResult>;
}

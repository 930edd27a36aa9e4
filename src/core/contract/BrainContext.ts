/**
 * .what = log methods injected through context; the CLI routes them to stderr, a library caller anywhere
 * .why = progress, refs and tool traces never pollute a caller's stdout
 */
export interface BrainLog {
  debug: (message: string, meta?: Record<string, unknown>) => void;
  info: (message: string, meta?: Record<string, unknown>) => void;
  warn: (message: string, meta?: Record<string, unknown>) => void;
  error: (message: string, meta?: Record<string, unknown>) => void;
}

/** .what = credentials and endpoint for one supplier */
export interface BrainCreds {
  apiKey?: string;
  url?: string;
}

/**
 * .what = what the operator injects at call time: creds by supplier, log, env, retry policy
 * .why = (input, context): tests swap in real-but-local values (the stand-in's url) instead of patching modules
 */
export interface BrainContext {
  log?: BrainLog;
  /** keyed by supplier: anthropic, qwen, openai */
  creds?: { anthropic?: BrainCreds; qwen?: BrainCreds; openai?: BrainCreds };
  /** where default creds are read from; process.env when absent */
  env?: Record<string, string | undefined>;
  /** bounds on the atom's own retries of transient supplier failures */
  retry?: Partial<BrainRetryPolicy>;
  /** supplier calls: the wait for a response (default 600 s) and the longest silence inside a stream (default 120 s) */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * the fetch the supplier SDKs send their requests with; absent = the SDK's own (node's global fetch). The CLI gives a
   * lean one over node:http (src/providers/transport/nodeHttpFetch.ts), so a one-shot run never loads undici
   */
  fetch?: typeof globalThis.fetch;
}

/** .what = bounds for retries of 408/409/429/5xx/529 and connection failures */
export interface BrainRetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxTotalWaitMs: number;
}

/** .what = a log that drops everything; the default when the caller injects none */
export const silentLog: BrainLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

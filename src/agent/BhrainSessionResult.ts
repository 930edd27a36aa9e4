import type { BrainMessage } from '../core/contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';
import type { BhrainError } from '../core/contract/errors.js';
import type { BhrainBudgetReached } from './session/checkBudget.js';

/**
 * .what = why a session ended; 'budget' = a limit of maxBudgetUsd, maxTokens or maxWallTimeMs was reached;
 *         'refusal' = the model declined to answer (the refusal text is the output; never retried)
 */
export type BhrainTermination = 'complete' | 'max-iterations' | 'budget' | 'error' | 'clarification' | 'refusal';

/**
 * .what = the lifecycle of a session (seed 002 §2.1 Bhrain.Session): ACTIVE while it runs; COMPLETED when the model
 *         answered (complete, refusal, clarification); TERMINATED when it was stopped (max-iterations, budget, abort, error)
 */
export type BhrainSessionStatus = 'ACTIVE' | 'COMPLETED' | 'TERMINATED';

/** .what = the tokens a session used, its subagents' included (seed 002 Bhrain.Memory.TokenUsage, with the cache parts) */
export interface BhrainSessionTokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** inputTokens + outputTokens, as IterationCompleted counts it */
  totalTokens: number;
  cacheGetTokens: number;
  cacheSetTokens: number;
}

/**
 * .what = the session entity (seed 002 §2.1): which config ran, where its lifecycle stands, what it used so far
 * .why = observable while it runs (brain.session) and final in the result, so a caller can tell a running, finished or
 *        stopped session apart without reading the termination
 */
export interface BhrainSession {
  uuid: string;
  /** a hash of the resolved config the session ran with (hashBhrainConfig): equal configs, equal uuids */
  configUuid: string;
  status: BhrainSessionStatus;
  iterationCount: number;
  tokenUsage: BhrainSessionTokenUsage;
  startedAt: string;
  /** set once the status is COMPLETED or TERMINATED */
  endedAt: string | null;
}

/**
 * .what = one subagent a session spawned with the task tool (seed 002 §2.1 Bhrain.Session.Subagent), and what it did
 * .why = the child's transcript is kept here, never in the parent's context: the parent read only its answer
 */
export interface BhrainSubagentRecord {
  sessionUuid: string;
  parentSessionUuid: string;
  /** explore, plan, general-purpose, or a custom subagent's name */
  type: string;
  description: string;
  prompt: string;
  /** COMPLETED when the child answered; FAILED when it ended otherwise (error, abort, max-iterations, budget, refusal) */
  status: 'COMPLETED' | 'FAILED';
  termination: BhrainTermination;
  /** the child's final answer (for a failed child, what it said before it stopped) */
  output: string;
  iterations: number;
  /** the child's spend, its own subagents' included */
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  transcript: BrainMessage[];
  /** the atom the child ran on */
  atom: string;
}

/** .what = who denied a tool call: the permission guard, the user at a prompt, or nobody could be asked (no prompter) */
export type BhrainDenialSource = 'guard' | 'prompt' | 'no-prompter';

/** .what = a tool call that was not run because it was denied, and why */
export interface BhrainToolCallDenial {
  callId: string;
  toolName: string;
  reason: string;
  by: BhrainDenialSource;
}

/**
 * .what = the tool calls of a session, counted
 * .note = made = every call answered; failed = answered with an error that was not a denial (invalid arguments, an
 *         unknown tool, a tool that failed or threw); denied = denied by the guard, refused at a prompt, or needing a
 *         prompt with no way to ask; promptedDenied = the denied ones that needed a prompt (refused, or no way to ask).
 *         So made = succeeded + failed + denied
 */
export interface BhrainToolCallCounts {
  made: number;
  failed: number;
  denied: number;
  promptedDenied: number;
  denials: BhrainToolCallDenial[];
}

/**
 * .what = what one invocation produced: the answer, why it ended, what it cost, and everything that was said
 * .why = a caller (or the CLI) can print, meter, persist and resume from it; a failed run keeps its partial transcript
 */
export interface BhrainSessionResult {
  sessionUuid: string;
  /** the final answer; for max-iterations and budget, the partial answer and an explanation; for refusal, the refusal text; for error, what was said before it */
  output: string;
  termination: BhrainTermination;
  iterations: number;
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  /** every message of the session in order, including those later compacted out of the context */
  transcript: BrainMessage[];
  /** the context as it stood at the end (after compactions): what a continuation builds on */
  messages: BrainMessage[];
  compactions: Array<{ strategy: string; tokensBefore: number; tokensAfter: number }>;
  /** set when termination is 'error' */
  error: BhrainError | null;
  /** the tool calls made, failed and denied, with each denial's reason */
  toolCalls: BhrainToolCallCounts;
  /** set when termination is 'budget': the limit reached, what was spent toward it, and its cap */
  budgetReached: BhrainBudgetReached | null;
  /** the session entity as it ended: COMPLETED or TERMINATED */
  session: BhrainSession;
  /**
   * every subagent this session spawned, and theirs in turn (flattened, in the order they finished; parentSessionUuid
   * tells the tree); tokens and cash above include theirs
   */
  subagents: BhrainSubagentRecord[];
}

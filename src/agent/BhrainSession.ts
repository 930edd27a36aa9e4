import type { BrainMessage } from '../core/contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../core/contract/BrainOutput.js';
import { emptyTokens } from '../core/contract/tokens.js';

/**
 * .what = why a session ended; 'budget' = a limit of maxBudgetUsd, maxTokens or maxWallTimeMs was reached;
 *         'refusal' = the model declined to answer (the refusal text is the output; never retried);
 *         'terminated' = a caller stopped it (BhrainLoop.terminate, brain.terminate), its reason recorded
 */
export type BhrainTermination = 'complete' | 'max-iterations' | 'budget' | 'error' | 'clarification' | 'refusal' | 'terminated';

/**
 * .what = the lifecycle of a session (docs/design/loop.md#the-session-entity): ACTIVE while it runs; COMPLETED when the model
 *         answered (complete, refusal, clarification); TERMINATED when it was stopped (max-iterations, budget, abort,
 *         error, terminated)
 */
export type BhrainSessionStatus = 'ACTIVE' | 'COMPLETED' | 'TERMINATED';

/** .what = the tokens a session used, its subagents' included (with the cache parts, docs/design/loop.md#the-session-entity) */
export interface BhrainSessionTokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** inputTokens + outputTokens, as IterationCompleted counts it */
  totalTokens: number;
  cacheGetTokens: number;
  cacheSetTokens: number;
}

/**
 * .what = a subagent a session spawned (docs/design/loop.md#subagents), live: RUNNING from the moment it is
 *         spawned, then COMPLETED (it answered) or FAILED (error, abort, max-iterations, budget, refusal, terminated)
 * .why = the child's transcript is kept here, never in the parent's context: the parent read only its result
 * .note = the names of docs/design/loop.md#subagents: uuid (the subagent, which is also its own session's uuid: the sessionUuid of its events),
 *         sessionUuid (the session that owns it), type, prompt, status, result. parentSessionUuid is the same as
 *         sessionUuid, kept for callers written before those names
 */
export interface BhrainSubagent {
  uuid: string;
  /** the session that spawned it */
  sessionUuid: string;
  /** explore, plan, general-purpose, or a custom subagent's name */
  type: string;
  prompt: string;
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
  /** set once it ended: what the spawning session's model read as the task's result (its answer, or why it failed) */
  result?: string;
  /** = sessionUuid (its name before sessionUuid, docs/design/loop.md#subagents) */
  parentSessionUuid: string;
  description: string;
  /** null while RUNNING */
  termination: BhrainTermination | null;
  /** the child's final answer (for a failed child, what it said before it stopped); '' while RUNNING */
  output: string;
  iterations: number;
  /** the child's spend, its own subagents' included */
  tokens: BrainTokens;
  cash: BrainCash | null;
  elapsedMs: number;
  transcript: readonly BrainMessage[];
  /** the atom the child runs on */
  atom: string;
}

/** .what = a subagent as it was spawned: RUNNING, nothing spent yet (the one place a subagent value starts) */
export const genBhrainSubagent = (
  input: Pick<BhrainSubagent, 'uuid' | 'sessionUuid' | 'type' | 'prompt' | 'description' | 'atom'>,
): BhrainSubagent =>
  Object.freeze({
    ...input,
    status: 'RUNNING',
    parentSessionUuid: input.sessionUuid,
    termination: null,
    output: '',
    iterations: 0,
    tokens: emptyTokens(),
    cash: null,
    elapsedMs: 0,
    transcript: [],
  });

/** .what = a subagent that ended: a new value with its outcome (the one place a subagent changes) */
export const endBhrainSubagent = (
  subagent: BhrainSubagent,
  outcome: Pick<BhrainSubagent, 'termination' | 'output' | 'iterations' | 'tokens' | 'cash' | 'elapsedMs' | 'transcript'> & {
    result: string;
  },
): BhrainSubagent => Object.freeze({ ...subagent, ...outcome, status: outcome.termination === 'complete' ? 'COMPLETED' : 'FAILED' });

/**
 * .what = the session entity (docs/design/loop.md#the-session-entity): which config ran, where its lifecycle stands, what it used so far, its
 *         context (messages) and its subagents
 * .why = observable while it runs (brain.session) and final in the result, so a caller can tell a running, finished or
 *        stopped session apart without reading the termination; each state is a new frozen value, so one handed out
 *        earlier never changes under its holder
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
  /** the context as it stands: what the model reads on its next request (after compactions) */
  messages: readonly BrainMessage[];
  /** every subagent spawned under this session, theirs included: RUNNING ones first seen, ended ones in the order they ended */
  subagents: readonly BhrainSubagent[];
  /** why a caller terminated it (BhrainLoop.terminate); null otherwise */
  terminationReason: string | null;
}

/** .what = the token usage of the session entity, from the loop's token counts */
export const asTokenUsage = (tokens: BrainTokens): BhrainSessionTokenUsage => ({
  inputTokens: tokens.input,
  outputTokens: tokens.output,
  totalTokens: tokens.input + tokens.output,
  cacheGetTokens: tokens.cache.get,
  cacheSetTokens: tokens.cache.set,
});

/** .what = a session entity (the one place one is built): a new frozen value, ACTIVE unless told otherwise */
export const genBhrainSession = (
  input: Pick<BhrainSession, 'uuid' | 'configUuid'> & Partial<Omit<BhrainSession, 'uuid' | 'configUuid'>>,
): BhrainSession =>
  Object.freeze({
    status: 'ACTIVE',
    iterationCount: 0,
    tokenUsage: asTokenUsage(emptyTokens()),
    startedAt: new Date().toISOString(),
    endedAt: null,
    messages: [],
    subagents: [],
    terminationReason: null,
    ...input,
  });

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainMessage, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import type { BrainCash, BrainTokens } from '../../core/contract/BrainOutput.js';
import { addCash, addTokens, emptyTokens, estimateMessagesTokens } from '../../core/contract/tokens.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import type { BhrainConfigResolved } from '../config/BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import { asTokenUsage, genBhrainSession, type BhrainSession, type BhrainSubagent } from '../BhrainSession.js';
import type { BhrainSessionResult, BhrainToolCallCounts } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import type { BhrainCompactionResult, BhrainMemoryManager } from '../memory/BhrainMemoryManager.js';
import type { BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';
import type { BhrainSessionApprovals } from '../permission/genSessionApprovals.js';
import type { BhrainToolRegistry } from '../tool/genToolRegistry.js';
import type { genRunawayDetector } from './detectRunaway.js';
import type { BhrainSpendLedger } from './genSpendLedger.js';
import { repairToolPairs } from './repairToolPairs.js';

/** .what = the plugins a brain may swap while a session runs: read at every iteration, so the next one uses the new ones */
export interface BhrainSessionPlugins {
  memoryManager: BhrainMemoryManager;
  permissionGuard: BhrainPermissionGuard;
}

/** .what = a session's context with every default applied: where it works, how it logs, what it redacts, where it spills */
export type SessionContext = BhrainContext & {
  cwd: string;
  /** real paths, checked (resolveAddDirs) */
  addDirs: readonly string[];
  env: Record<string, string | undefined>;
  log: BrainLog;
  redact: SecretRedactor;
  spillDir: string;
};

/**
 * .what = what a child session shares with the session that spawned it: the session itself (for the entity, the
 *         subagents and termination), its depth plus one, the budget's ledger, the approvals, and the context
 * .why = a child is a fork of its parent: one budget, one "don't ask again", one signal and redactor for the whole tree
 */
export interface SessionLineage {
  parent: SessionState;
  depth: number;
  ledger: BhrainSpendLedger;
  approvals: BhrainSessionApprovals;
  context: BhrainContext;
}

/** .what = a child session as a subagent asks for it: its identity, config, tools, task, log, spill dir and event sink */
export interface ChildSessionInput {
  uuid: string;
  config: BhrainConfigResolved;
  registry: BhrainToolRegistry;
  prompt: string;
  log: BrainLog;
  spillDir: string | undefined;
  emit: (event: BhrainEvent) => void;
}

/** .what = runs a child session as a fork of its parent: the loop itself, handed in so that no module imports the loop back */
export type RunChildSession = (child: ChildSessionInput, lineage: SessionLineage) => Promise<BhrainSessionResult>;

/** .what = what every request carries besides the messages: the tools, the system prompt made from them, and their size */
export interface SessionRequestShape {
  tools: readonly BrainToolDefinition[];
  systemText: string;
  /** estimated tokens of the system prompt and the tool definitions */
  fixed: number;
}

/**
 * .what = one running session as data (docs/design/loop.md#the-session-entity, with what the loop needs): its setup, which never
 *         changes, and its progress, which only the functions of this module and of runTurn change
 * .why = a turn is a function over this value (runTurn, resolveTurn), not a closure over fourteen variables; a child is
 *        a fork of it (fork()), and a caller can watch it (sessionOf), stop it (BhrainLoop.terminate) or step it
 *        (BhrainLoop.iterate)
 * .note = messages and transcript grow in place (pushed, never copied per iteration); the session entity copies them
 *         when it is read after a change (sessionOf), so a value handed out never changes under its holder
 */
export interface SessionState {
  readonly uuid: string;
  readonly configUuid: string;
  /** 0 for the session a caller started, 1 for its subagents, ... */
  readonly depth: number;
  readonly parent: SessionState | null;
  readonly config: BhrainConfigResolved;
  readonly plugins: () => BhrainSessionPlugins;
  /** the brain's toolboxes, without the task tool (a child picks its tools from these) */
  readonly toolBoxes: BhrainToolRegistry;
  /** what the model is offered: the toolboxes, and the task tool when subagents are on */
  readonly registry: BhrainToolRegistry;
  readonly context: SessionContext;
  readonly emit: (event: BhrainEvent) => void;
  /** the budget of the whole session tree */
  readonly ledger: BhrainSpendLedger;
  /** the "don't ask again" answers of the whole session tree */
  readonly approvals: BhrainSessionApprovals;
  /** this session's own signal: the caller's abort, or the wall-time deadline, stops its requests and tools */
  readonly stop: AbortController;
  readonly startedMs: number;
  readonly runaway: ReturnType<typeof genRunawayDetector>;
  /** makes what the requests carry besides the messages: system prompt and tools (cached while the tool set is unchanged) */
  readonly shape: () => SessionRequestShape;
  /** runs a subagent's session (runSession): the spawn capability of this session's tools uses it */
  readonly runChild: RunChildSession;
  /** a child's share of this session (see SessionLineage) */
  readonly fork: (child: { log: BrainLog; spillDir: string | undefined }) => SessionLineage;

  /** the context: what the model reads next (changed only by appendMessages and replaceMessages) */
  messages: BrainMessage[];
  /** everything said, including what compaction later removed from the context (changed only by appendMessages) */
  readonly transcript: BrainMessage[];
  /** the estimated tokens of messages, kept as they change (sizing the context costs nothing per iteration) */
  historyTokens: number;
  /** the supplier's count of the context as of the last generation; null before one, or after a compaction */
  measuredTokens: number | null;
  /** iterations done: generations that came back */
  iteration: number;
  /** the latest text the model said: a partial answer when the session stops early */
  lastText: string;
  /** the last answer was empty and the model was nudged once */
  nudgedEmpty: boolean;
  tokens: BrainTokens;
  /** undefined before the first request; null once a request's price was unknown */
  cash: BrainCash | null | undefined;
  toolCalls: BhrainToolCallCounts;
  compactions: BhrainSessionResult['compactions'];
  subagents: readonly BhrainSubagent[];
  /** a replacement a background observer signalled, applied at the next iteration's start */
  pendingUpdate: BhrainCompactionResult | null;
  /** the last turn's checkpoint (checkpointer.afterTurn), taken while the next request is answered; awaited before any
   *  call runs and before the session ends (never rejects: a failed checkpoint is warned) */
  checkpointing: Promise<void> | null;
  /** set by BhrainLoop.terminate: the session stops at its next boundary */
  terminateRequest: { reason: string } | null;
  /** the wall-time deadline fired */
  deadlinePassed: boolean;
  /** where the session's lifecycle stands: ACTIVE until finishSession */
  lifecycle: Pick<BhrainSession, 'status' | 'startedAt' | 'endedAt' | 'terminationReason'>;
  /** counts the changes the entity shows: the entity is built again only when it moved */
  version: number;
  /** the entity as last built, and the version it shows */
  entity: { version: number; session: BhrainSession } | null;
}

/** .what = the setup of a session state, as openSession resolves it */
export type SessionSetup = Pick<
  SessionState,
  | 'uuid'
  | 'configUuid'
  | 'depth'
  | 'parent'
  | 'config'
  | 'plugins'
  | 'toolBoxes'
  | 'registry'
  | 'context'
  | 'emit'
  | 'ledger'
  | 'approvals'
  | 'runaway'
  | 'shape'
  | 'runChild'
> & {
  /** what came before, as the caller gave it (the transcript starts with it; the context with it repaired) */
  history: readonly BrainMessage[];
  startedMs: number;
};

/**
 * .what = a message stamped with when the loop appended it (docs/design/loop.md#messages)
 * .why = built field by field, one shape per role: a copy by spread gives the history objects that every reader of it
 *        (the atoms' request mapping, each iteration) reads measurably slower
 */
const stamp = (message: BrainMessage, timestamp: string): BrainMessage => {
  if (message.role === 'tool')
    return message.truncated === undefined && message.exitCode === undefined && message.malfunction === undefined
      ? {
          role: 'tool',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          content: message.content,
          isError: message.isError,
          timestamp,
        }
      : {
          role: 'tool',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          content: message.content,
          isError: message.isError,
          ...(message.truncated === undefined ? {} : { truncated: message.truncated }),
          ...(message.exitCode === undefined ? {} : { exitCode: message.exitCode }),
          ...(message.malfunction === undefined ? {} : { malfunction: message.malfunction }),
          timestamp,
        };
  if (message.role === 'assistant')
    return message.reasoning
      ? { role: 'assistant', content: message.content, toolCalls: message.toolCalls, reasoning: message.reasoning, timestamp }
      : { role: 'assistant', content: message.content, toolCalls: message.toolCalls, timestamp };
  return { role: message.role, content: message.content, timestamp };
};

/** .what = messages stamped with the time the loop appends them */
const stamped = (messages: readonly BrainMessage[]): BrainMessage[] => {
  const timestamp = new Date().toISOString();
  return messages.map((message) => stamp(message, timestamp));
};

/** .what = a new session state over its setup: nothing said or spent yet (the one place a SessionState is built) */
export const genSessionState = (setup: SessionSetup): SessionState => {
  const { history, ...fixed } = setup;
  // a history given by the caller may have lost results (interrupted, compacted): repaired once, for the context
  const messages = repairToolPairs(history);
  const state: SessionState = {
    ...fixed,
    stop: new AbortController(),
    fork: (child) => ({
      parent: state,
      depth: state.depth + 1,
      ledger: state.ledger,
      approvals: state.approvals,
      // the child's text and events are its own, its signal is this session's: the parent's stream shows only its start and end
      context: {
        ...state.context,
        onTextDelta: undefined,
        onTextReset: undefined,
        onReasoningDelta: undefined,
        onEvent: undefined,
        signal: state.stop.signal,
        log: child.log,
        spillDir: child.spillDir,
      },
    }),
    messages: [...messages],
    transcript: [...history],
    historyTokens: estimateMessagesTokens(messages),
    measuredTokens: null,
    iteration: 0,
    lastText: '',
    nudgedEmpty: false,
    tokens: emptyTokens(),
    cash: undefined,
    toolCalls: { made: 0, failed: 0, denied: 0, promptedDenied: 0, denials: [] },
    compactions: [],
    subagents: [],
    pendingUpdate: null,
    checkpointing: null,
    terminateRequest: null,
    deadlinePassed: false,
    lifecycle: { status: 'ACTIVE', startedAt: new Date().toISOString(), endedAt: null, terminationReason: null },
    version: 0,
    entity: null,
  };
  return state;
};

/**
 * .what = the session entity as it stands (docs/design/loop.md#the-session-entity): built again, as a new frozen value, only when
 *         the session changed since it was last read
 * .why = brain.session is live at no cost to an iteration nobody watches: the messages are copied when read, not when
 *        appended
 */
export const sessionOf = (state: SessionState): BhrainSession => {
  if (state.entity?.version === state.version) return state.entity.session;
  const session = genBhrainSession({
    uuid: state.uuid,
    configUuid: state.configUuid,
    ...state.lifecycle,
    iterationCount: state.iteration,
    tokenUsage: asTokenUsage(state.tokens),
    messages: [...state.messages],
    subagents: state.subagents,
  });
  state.entity = { version: state.version, session };
  return session;
};

/** .what = marks that the session changed (its entity shows it when next read), with any lifecycle changes */
export const publishSession = (state: SessionState, changes: Partial<SessionState['lifecycle']> = {}): void => {
  state.lifecycle = { ...state.lifecycle, ...changes };
  state.version++;
};

/** .what = appends messages to the context and the transcript, each stamped with the time the loop appended it */
export const appendMessages = (state: SessionState, added: readonly BrainMessage[]): void => {
  if (!added.length) return;
  const messages = stamped(added);
  state.messages.push(...messages);
  state.transcript.push(...messages);
  state.historyTokens += estimateMessagesTokens(messages);
  state.version++;
};

/** .what = replaces the context (a compaction): the transcript keeps everything, the size is measured anew */
export const replaceMessages = (state: SessionState, messages: readonly BrainMessage[]): void => {
  state.messages = [...messages];
  state.version++;
  state.measuredTokens = null;
  state.historyTokens = estimateMessagesTokens(messages);
};

/** .what = adds a spend (a request's, or a finished subagent's) to the session's tokens and cost */
export const addSessionSpend = (state: SessionState, spend: { tokens: BrainTokens; cash: BrainCash | null }): void => {
  state.tokens = addTokens(state.tokens, spend.tokens);
  state.cash = state.cash === undefined ? spend.cash : addCash(state.cash, spend.cash);
  state.version++;
};

/** .what = the estimated size of the context: what was measured last plus what came since, or the estimate, the larger */
export const contextTokensOf = (state: SessionState, sinceMeasured: readonly BrainMessage[]): number =>
  Math.max(state.shape().fixed + state.historyTokens, (state.measuredTokens ?? 0) + estimateMessagesTokens(sinceMeasured));

/**
 * .what = publishes a subagent as it stands (RUNNING, or ended) to its session and every session above it; an ended one
 *         moves to the end of each list and adds its spend to the session that spawned it
 * .why = brain.session shows every subagent of the tree as it runs; each list ends in the order the subagents ended
 */
export const recordSubagent = (state: SessionState, subagent: BhrainSubagent): void => {
  if (subagent.status !== 'RUNNING') addSessionSpend(state, subagent);
  for (let at: SessionState | null = state; at; at = at.parent) {
    at.subagents = [...at.subagents.filter((known) => known.uuid !== subagent.uuid), subagent];
    at.version++;
  }
};

/** .what = the reason the session, or a session above it, was asked to terminate; null when none was */
export const terminationRequested = (state: SessionState): { reason: string } | null => {
  for (let at: SessionState | null = state; at; at = at.parent) if (at.terminateRequest) return at.terminateRequest;
  return null;
};

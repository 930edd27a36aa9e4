import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import type { BhrainCompactionResult, BhrainMemoryContext } from '../memory/BhrainMemoryManager.js';
import { describeBudgetReached } from './checkBudget.js';
import { budgetReachedOf, generateInSession } from './generateInSession.js';
import { repairToolPairs } from './repairToolPairs.js';
import { replaceMessages, type SessionState } from './SessionState.js';

const isMessageList = (value: unknown): value is BrainMessage[] =>
  Array.isArray(value) &&
  value.every((message) => ['system', 'user', 'assistant', 'tool'].includes(message?.role) && typeof message.content === 'string');

/** .what = what a memory manager may use in this session: the atom, a budget-checked generate, the sizes, the spill dir */
const memoryContextOf = (state: SessionState, size: number): BhrainMemoryContext => ({
  atom: state.config.atom,
  // a summary is a request like any other: checked against the budget before, counted after
  generate: async (request) => {
    const reached = budgetReachedOf(state);
    if (reached) throw new Error(`no summary was requested: ${describeBudgetReached(reached)}`);
    return generateInSession(state, request);
  },
  contextTokens: size,
  limitTokens: state.config.limits.contextTokens,
  fixedTokens: state.shape().fixed,
  spillDir: state.context.spillDir,
  log: state.context.log,
});

/**
 * .what = applies a memory manager's decision: a valid replacement becomes the context (tool pairs repaired), recorded
 *         as a compaction with its Compacted event; anything else leaves the context as it is
 */
export const applyMemoryUpdate = (state: SessionState, update: BhrainCompactionResult, tokensBefore: number): void => {
  const { name } = state.plugins().memoryManager;
  const { log } = state.context;
  if (!update.shouldUpdate) return;
  if (!isMessageList(update.newMessages))
    return log.error(`memory manager '${name}' proposed an update without a valid message list; the context is unchanged`);
  replaceMessages(state, repairToolPairs(update.newMessages));
  const tokensAfter = state.shape().fixed + state.historyTokens;
  state.compactions.push({ strategy: name, tokensBefore, tokensAfter });
  log.info(`context compacted by ${name}: ${tokensBefore} → ${tokensAfter} tokens`);
  state.emit({
    type: 'Compacted',
    sessionUuid: state.uuid,
    strategy: name,
    tokensBefore,
    tokensAfter,
    occurredAt: new Date().toISOString(),
  });
};

/**
 * .what = consults the memory manager after an iteration (docs/design/loop.md#memory): observe in the background (its signalled
 *         update waits for the next iteration), then shouldUpdate, and getUpdate when it says so
 * .why = memory policy is the plugin's; its failures never end the loop, they leave the context unchanged
 */
export const consultMemory = async (state: SessionState, size: number): Promise<void> => {
  const manager = state.plugins().memoryManager;
  const { log } = state.context;
  const observeFailed = (error: unknown) =>
    log.error(`memory manager '${manager.name}' observe failed: ${(error as Error)?.message ?? error}`);
  try {
    // not awaited: observation runs in the background and signals updates applied between iterations
    Promise.resolve(
      manager.observe?.(
        { messages: state.messages },
        { ...memoryContextOf(state, size), signalUpdate: (update) => void (state.pendingUpdate = update) },
      ),
    ).catch(observeFailed);
  } catch (error) {
    observeFailed(error);
  }
  try {
    if (await manager.shouldUpdate({ messages: state.messages }, memoryContextOf(state, size))) {
      // PreCompact hooks see the context before it is replaced (they inform; they cannot stop the compaction)
      if (state.config.hooks) await (await import('./sessionHooks.js')).runSessionHooks(state, 'PreCompact', { trigger: 'auto' });
      applyMemoryUpdate(state, await manager.getUpdate({ messages: state.messages }, memoryContextOf(state, size)), size);
    }
  } catch (error) {
    log.error(`memory manager '${manager.name}' failed: ${(error as Error).message}; the context is unchanged`);
  }
};

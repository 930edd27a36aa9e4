import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import { estimateMessagesTokens } from '../../core/contract/tokens.js';
import { consultMemory } from './consultMemory.js';
import { resolveTurn, type NextStep } from './resolveTurn.js';
import { runTurn } from './runTurn.js';
import { appendMessages, replaceMessages, terminationRequested, type SessionState } from './SessionState.js';

/**
 * .what = one loop cycle as docs/design/loop.md#iteration counts it, with what the session does next
 * .note = tokenUsage is this iteration's generation (none when its request failed: then number is the iterations done)
 */
export interface BhrainLoopIteration {
  number: number;
  hadToolCalls: boolean;
  toolCallCount: number;
  tokenUsage: { inputTokens: number; outputTokens: number; totalTokens: number };
  next: NextStep;
}

/**
 * .what = one iteration of a session (docs/design/loop.md#iteration): a turn (runTurn), its next step decided
 *         (resolveTurn) and logged, what it appends appended, and, when the session goes on, the memory manager
 *         consulted (docs/design/loop.md#memory: after every iteration, the continued ones included: a paused turn, calls cut
 *         off by the output limit, an empty answer)
 * .why = runSession is this in a loop between boundaries; a caller can also step a session with it. messages, when
 *        given, become the context first (as a memory manager's replacement would)
 */
export const iterate = async (input: { session: SessionState; messages?: readonly BrainMessage[] }): Promise<BhrainLoopIteration> => {
  const state = input.session;
  if (input.messages) replaceMessages(state, input.messages);
  const turn = await runTurn(state);
  if (turn.type !== 'ran')
    return {
      number: state.iteration,
      hadToolCalls: false,
      toolCallCount: 0,
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      next: turn,
    };
  const { generation } = turn;
  const next: NextStep = turn.fatal
    ? { type: 'stop', stop: { termination: 'error', error: turn.fatal }, note: null }
    : resolveTurn({ generation, nudgedEmpty: state.nudgedEmpty, iteration: state.iteration, atom: state.config.atom.slug });
  if (next.note) state.context.log[next.note.level](next.note.message);
  if (next.type === 'run_again') {
    appendMessages(state, next.append);
    state.nudgedEmpty = next.nudgedEmpty;
    // a session asked to terminate stops at its next boundary: no summary is requested for an iteration that will not come
    if (!terminationRequested(state)) await consultMemory(state, turn.contextTokens + estimateMessagesTokens(next.append));
  }
  const calls = generation.message.toolCalls.length;
  return {
    number: state.iteration,
    hadToolCalls: calls > 0,
    toolCallCount: calls,
    tokenUsage: {
      inputTokens: generation.tokens.input,
      outputTokens: generation.tokens.output,
      totalTokens: generation.tokens.input + generation.tokens.output,
    },
    next,
  };
};

import { describe, expect, it } from 'vitest';

import type { BrainAtomGeneration } from '../../core/contract/BrainAtom.js';
import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { AbortedError, EmptyAnswerError, LoopError } from '../../core/contract/errors.js';
import { EMPTY_ANSWER_NUDGE } from '../constants.js';
import { describeStop } from './finishSession.js';
import { resolveBoundary, resolveTurn } from './resolveTurn.js';

/** a generation as resolveTurn reads it: the assistant's text and calls, why it stopped, any calls cut off */
const turn = (input: {
  text?: string;
  calls?: BrainToolCall[];
  stopReason?: BrainAtomGeneration['stopReason'];
  truncated?: BrainAtomGeneration['truncatedToolCalls'];
}): Pick<BrainAtomGeneration, 'message' | 'stopReason' | 'truncatedToolCalls'> => ({
  message: { role: 'assistant', content: input.text ?? '', toolCalls: input.calls ?? [] },
  stopReason: input.stopReason ?? (input.calls?.length ? 'tool_calls' : 'end'),
  truncatedToolCalls: input.truncated,
});
const call: BrainToolCall = { id: 'call_1', name: 'read', input: { path: 'a.ts' } };
const resolve = (generation: ReturnType<typeof turn>, nudgedEmpty = false) =>
  resolveTurn({ generation, nudgedEmpty, iteration: 3, atom: 'claude/haiku' });

describe('resolveTurn: what a turn leads to, decided alone (pure)', () => {
  it('given an answer with no calls, then the session ends with it as the final output', () => {
    expect(resolve(turn({ text: 'Paris.' }))).toEqual({ type: 'final_output', termination: 'complete', output: 'Paris.', note: null });
  });

  it('given an answer cut by the output limit (max_tokens, no call), then it is still final, with a warning that it may be cut short', () => {
    expect(resolve(turn({ text: 'The list: a, b, c', stopReason: 'max_tokens' }))).toEqual({
      type: 'final_output',
      termination: 'complete',
      output: 'The list: a, b, c',
      note: { level: 'warn', message: 'the answer reached the output token limit and may be cut short' },
    });
  });

  it('given calls, then the loop runs again with their results, and an earlier nudge is forgotten', () => {
    expect(resolve(turn({ calls: [call] }), true)).toEqual({ type: 'run_again', append: [], nudgedEmpty: false, note: null });
  });

  it('given a refusal, then the session ends as a refusal with its text; with no text, a notice says so; calls do not change that', () => {
    expect(resolve(turn({ text: 'I cannot help with that.', stopReason: 'refusal' }))).toMatchObject({
      type: 'final_output',
      termination: 'refusal',
      output: 'I cannot help with that.',
      note: { level: 'warn', message: 'iteration 3: claude/haiku refused the request (stop reason refusal); it is not retried' },
    });
    expect(resolve(turn({ text: ' ', stopReason: 'refusal' }))).toMatchObject({
      termination: 'refusal',
      output: '[claude/haiku refused the request (stop reason refusal) and gave no text]',
    });
    expect(resolve(turn({ text: 'no', calls: [call], stopReason: 'refusal' }))).toMatchObject({
      type: 'final_output',
      termination: 'refusal',
    });
  });

  it('given calls cut off by the output limit, then the model is told to continue in smaller steps, with or without whole calls beside them', () => {
    const truncated = [{ id: 'call_cut', name: 'write', receivedChars: 5_000 }];
    for (const calls of [[], [call]]) {
      const next = resolve(turn({ calls, stopReason: 'max_tokens', truncated }), true);
      expect(next).toMatchObject({ type: 'run_again', nudgedEmpty: false, note: { level: 'warn' } });
      if (next.type !== 'run_again') throw new Error('expected run_again');
      expect(next.append).toEqual([
        { role: 'user', content: expect.stringMatching(/^\[bhrain: your last tool call \(write, 5000 characters/) },
      ]);
      expect(next.append[0].content).toContain('was cut off by the output-token limit and was not run');
    }
  });

  it('given a paused turn (pause_turn) with no calls, then it is continued as is: nothing appended, the nudge state kept', () => {
    expect(resolve(turn({ text: 'Still searching.', stopReason: 'pause_turn' }), true)).toEqual({
      type: 'run_again',
      append: [],
      nudgedEmpty: true,
      note: { level: 'info', message: 'iteration 3: the supplier paused the turn (pause_turn); it is continued' },
    });
  });

  it('given an empty answer, then the model is nudged once; given a second in a row, then the session stops with an EmptyAnswerError', () => {
    expect(resolve(turn({ text: '  ' }))).toEqual({
      type: 'run_again',
      append: [{ role: 'user', content: EMPTY_ANSWER_NUDGE }],
      nudgedEmpty: true,
      note: { level: 'warn', message: 'iteration 3: the model returned an empty answer; it is asked to continue' },
    });
    const stopped = resolve(turn({ text: '' }), true);
    expect(stopped).toMatchObject({ type: 'stop', stop: { termination: 'error' } });
    if (stopped.type !== 'stop' || stopped.stop.termination !== 'error') throw new Error('expected an error stop');
    expect(stopped.stop.error).toBeInstanceOf(EmptyAnswerError);
    expect(stopped.stop.error.message).toBe(
      'claude/haiku returned an empty answer twice in a row (no text, no tool call); the session stopped with its transcript kept',
    );
  });
});

describe('resolveBoundary: whether the next iteration may run (pure)', () => {
  const open = { iteration: 2, maxIterations: 5, aborted: false, terminateRequest: null, budgetReached: null };
  const budget = { limit: 'maxTokens' as const, spent: 10, cap: 10 };

  it('given nothing in the way, then the iteration runs', () => {
    expect(resolveBoundary(open)).toBeNull();
  });

  it('given each reason alone, then the session stops for it', () => {
    expect(resolveBoundary({ ...open, iteration: 5 })).toEqual({ termination: 'max-iterations' });
    const aborted = resolveBoundary({ ...open, aborted: true });
    expect(aborted).toMatchObject({ termination: 'error' });
    expect(aborted?.termination === 'error' && aborted.error).toBeInstanceOf(AbortedError);
    expect(aborted?.termination === 'error' && aborted.error.message).toBe(
      'the session was interrupted after 2 iterations; its transcript is kept',
    );
    expect(resolveBoundary({ ...open, terminateRequest: { reason: 'user left' } })).toEqual({
      termination: 'terminated',
      reason: 'user left',
    });
    expect(resolveBoundary({ ...open, budgetReached: budget })).toEqual({ termination: 'budget', budgetReached: budget });
  });

  it('given several at once, then maxIterations, then an abort, then a termination, then the budget decides', () => {
    const all = { iteration: 5, maxIterations: 5, aborted: true, terminateRequest: { reason: 'r' }, budgetReached: budget };
    expect(resolveBoundary(all)?.termination).toBe('max-iterations');
    expect(resolveBoundary({ ...all, iteration: 1 })?.termination).toBe('error');
    expect(resolveBoundary({ ...all, iteration: 1, aborted: false })?.termination).toBe('terminated');
    expect(resolveBoundary({ ...all, iteration: 1, aborted: false, terminateRequest: null })?.termination).toBe('budget');
  });
});

describe('describeStop: how an early stop reads (pure)', () => {
  const said = { lastText: 'step two done', maxIterations: 2 };

  it('given each stop, then the partial answer comes first and a notice says why and how to go on; the notice is also apart', () => {
    expect(describeStop({ termination: 'max-iterations' }, said).output).toMatch(
      /^step two done\n\n\[bhrain stopped after 2 iterations \(maxIterations\) before the task was complete/,
    );
    expect(describeStop({ termination: 'max-iterations' }, { ...said, maxIterations: 1 }).notice).toMatch(
      /^\[bhrain stopped after 1 iteration \(maxIterations\) before the task was complete/,
    );
    const notice =
      "[bhrain stopped before the task was complete: the session was terminated (the user left). The answer above is partial. Continue from this session's refs.]";
    expect(describeStop({ termination: 'terminated', reason: 'the user left' }, said)).toEqual({
      termination: 'terminated',
      output: `step two done\n\n${notice}`,
      notice,
      terminationReason: 'the user left',
    });
    expect(
      describeStop({ termination: 'budget', budgetReached: { limit: 'maxTokens', spent: 12, cap: 10 } }, { ...said, lastText: '' }),
    ).toMatchObject({
      termination: 'budget',
      output: expect.stringMatching(/^\[bhrain stopped before the task was complete: the token budget was reached/),
    });
    const error = new LoopError('boom');
    expect(describeStop({ termination: 'error', error }, said)).toEqual({ termination: 'error', output: 'step two done', error });
  });
});

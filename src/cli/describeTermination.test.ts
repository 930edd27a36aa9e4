import { describe, expect, it } from 'vitest';

import { describeTermination } from './describeTermination.js';
import { formatStopNotice } from './run/formatStopNotice.js';

describe('describeTermination: how a run ended, in the words of its JSON termination (pure)', () => {
  it.each([
    ['complete', 1, 'complete after 1 iteration'],
    ['complete', 3, 'complete after 3 iterations'],
    ['max-iterations', 1, 'stopped after 1 iteration'],
    ['max-iterations', 2, 'stopped after 2 iterations'],
    ['budget', 6, 'budget reached after 6 iterations'],
    ['interrupted', 1, 'interrupted after 1 iteration'],
    ['interrupted', 0, 'interrupted'],
    ['error', 2, 'failed after 2 iterations'],
    ['refusal', 1, 'refused by the model after 1 iteration'],
    ['terminated', 0, 'stopped by a hook'],
    ['clarification', 0, 'asked for a task (the prompt was empty)'],
    ['usage', null, 'not started (bad usage)'],
    // a record of a later version: its value as it is
    ['paused', 2, 'paused after 2 iterations'],
  ] as const)('%s after %s → "%s"', (termination, iterations, words) => {
    expect(describeTermination({ termination, iterations })).toBe(words);
  });
});

describe('formatStopNotice: what stderr says of an early stop (pure)', () => {
  const stop = { skill: 'act', iterations: 2, budgetReached: null, terminationReason: null, answered: true };

  it('an early stop says how it ended, whether stdout holds a partial answer, and how to go on', () => {
    expect(formatStopNotice({ ...stop, termination: 'max-iterations' })).toBe(
      'bhrain act: stopped after 2 iterations, before the task was complete. The answer on stdout is partial. Continue from its series (--continue, or --on-series), or allow more iterations (--max-iterations).',
    );
    expect(formatStopNotice({ ...stop, termination: 'max-iterations', answered: false })).toMatch(
      /\. Nothing was answered: stdout is empty\. /,
    );
    expect(formatStopNotice({ ...stop, termination: 'budget', budgetReached: { limit: 'maxTokens', spent: 12, cap: 10 } })).toBe(
      'bhrain act: budget reached after 2 iterations, before the task was complete: the token budget was reached: 12 tokens spent (input, output and cache) of a cap of 10 (--max-tokens, limits.maxTokens). The answer on stdout is partial. Continue from its series (--continue, or --on-series), or raise the limit.',
    );
    expect(
      formatStopNotice({ ...stop, termination: 'terminated', iterations: 0, terminationReason: 'the gate hook said no', answered: false }),
    ).toBe(
      'bhrain act: stopped by a hook, before the task was complete: the gate hook said no. Nothing was answered: stdout is empty. Continue from its series (--continue, or --on-series).',
    );
  });

  it('any other ending has no notice: its status line says it', () => {
    for (const termination of ['complete', 'error', 'interrupted', 'refusal', 'clarification'])
      expect(formatStopNotice({ ...stop, termination })).toBeNull();
  });
});

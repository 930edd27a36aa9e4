import { describe, expect, it } from 'vitest';
import type { BrainAssistantMessage, BrainMessage } from '../../core/contract/BrainMessage.js';
import { chainAnswer, planRhachetAsk } from './planRhachetAsk.js';

const episode = { hash: 'e1', exid: null, exchanges: [] };
const answer: BrainAssistantMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read', input: { path: 'a' } }] };

describe('planRhachetAsk', () => {
  it('continues the episode of the answer the context ends with: results as executions, a later notice with the last', () => {
    const asked: BrainMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'read a' },
    ];
    const known = new Map([[chainAnswer(planRhachetAsk({ messages: asked, known: new Map() }), answer), episode]]);
    const plan = planRhachetAsk({
      messages: [
        ...asked,
        { ...answer, timestamp: '2026-01-01T00:00:00Z' },
        { role: 'tool', toolCallId: 'c1', toolName: 'read', content: 'denied', isError: true },
        { role: 'user', content: 'note: one call was denied' },
      ],
      known,
    });
    expect(plan.episode).toBe(episode);
    expect(plan.prompt).toMatchObject([
      { exid: 'c1', slug: 'read', input: { path: 'a' }, signal: 'error:constraint', output: { error: { name: 'ConstraintError' } } },
    ]);
    expect(((plan.prompt as Array<{ output: { error: Error } }>)[0].output.error as Error).message).toBe(
      'denied\n\nnote: one call was denied',
    );
  });

  it('a context compaction rewrote starts a new episode from its transcript, the summary first', () => {
    const asked: BrainMessage[] = [{ role: 'user', content: 'read a' }];
    const known = new Map([[chainAnswer(planRhachetAsk({ messages: asked, known: new Map() }), answer), episode]]);
    const plan = planRhachetAsk({
      messages: [
        { role: 'user', content: '[summary] a was read; it says hi' },
        { role: 'assistant', content: 'ok', toolCalls: [] },
        { role: 'user', content: 'now what?' },
      ],
      known,
    });
    expect(plan.episode).toBeNull();
    expect(plan.prompt).toMatch(
      /^The conversation so far, as a transcript.*\[user\]\n\[summary\] a was read; it says hi.*\[assistant\]\nok.*\[user\]\nnow what\?$/s,
    );
    expect(planRhachetAsk({ messages: asked, known }).prompt).toBe('read a');
  });
});

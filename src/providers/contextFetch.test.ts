import { describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse, openaiChunks, openaiSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import { genBrainAtom } from './genBrainAtom.js';

const { replayer, contextFor } = useRawReplay();
const hi = { messages: [{ role: 'user' as const, content: 'hi' }] };
const claudeOk = () =>
  anthropicSse(
    anthropicMessageEvents({
      content: [
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
        { type: 'content_block_stop', index: 0 },
      ],
      stopReason: 'end_turn',
    }),
  );

/** a fetch that counts its calls and sends each with node's own */
const countingFetch = () => {
  const urls: string[] = [];
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    urls.push(String(input instanceof Request ? input.url : input));
    return globalThis.fetch(input, init);
  }) as typeof globalThis.fetch;
  return { fetch, urls };
};

describe('start-up shortcuts belong to the caller: the providers send with context.fetch, else the SDK own', () => {
  it('given context.fetch, when either atom generates, then its request goes through that fetch', async () => {
    replayer().replay(claudeOk(), openaiSse(openaiChunks({ deltas: [{ content: 'ok' }], finishReason: 'stop' })));
    const counted = countingFetch();
    const claude = await genBrainAtom({ slug: 'claude/haiku' }).generate(hi, { ...contextFor(), fetch: counted.fetch });
    const qwen = await genBrainAtom({ slug: 'qwen/qwen-plus' }).generate(hi, { ...contextFor(), fetch: counted.fetch });
    expect([claude.message.content, qwen.message.content]).toEqual(['ok', 'ok']);
    expect(counted.urls.map((url) => new URL(url).pathname)).toEqual(['/v1/messages', '/v1/chat/completions']);
  });

  it('given no context.fetch, when an atom generates after one that had it, then that fetch is not used (a client per fetch)', async () => {
    replayer().replay(claudeOk(), claudeOk());
    const counted = countingFetch();
    const atom = genBrainAtom({ slug: 'claude/haiku' });
    await atom.generate(hi, { ...contextFor(), fetch: counted.fetch });
    const plain = await atom.generate(hi, contextFor());
    expect(plain.message.content).toBe('ok');
    expect(replayer().requests).toHaveLength(2);
    expect(counted.urls).toHaveLength(1);
  });
});

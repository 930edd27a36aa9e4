// Recorded-shape streams replayed byte for byte through the real SDKs: stop reasons and tool-call assembly
import { describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse, openaiChunks, openaiSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { genBrainAtom } from './genBrainAtom.js';

const { replayer, contextFor } = useRawReplay();
const context = (): BrainContext => contextFor();
const tools: BrainToolDefinition[] = [
  {
    name: 'read_file',
    description: 'reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'write',
    description: 'writes a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  },
];
const request = { messages: [{ role: 'user' as const, content: 'go' }], tools };
const claude = () => genBrainAtom({ slug: 'claude/haiku' }).generate(request, context());
const qwen = () => genBrainAtom({ slug: 'qwen/qwen-plus' }).generate(request, context());

/** anthropic content events of one tool_use block whose input streams as the given fragments */
const toolUseBlock = (index: number, id: string, name: string, fragments: string[]) => [
  { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
  ...fragments.map((partial_json) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } })),
  { type: 'content_block_stop', index },
];
const textBlock = (index: number, text: string) => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
  { type: 'content_block_stop', index },
];
const anthropicBody = (content: Array<{ type: string } & Record<string, unknown>>, stopReason: string) =>
  anthropicSse(anthropicMessageEvents({ content, stopReason }));
/** one openai tool-call delta */
const callDelta = (index: number, part: { id?: string; name?: string; arguments?: string }) => ({
  tool_calls: [
    {
      index,
      ...(part.id ? { id: part.id, type: 'function' } : {}),
      function: { ...(part.name ? { name: part.name } : {}), ...(part.arguments !== undefined ? { arguments: part.arguments } : {}) },
    },
  ],
});
const openaiBody = (deltas: Array<Record<string, unknown>>, finishReason: string) => openaiSse(openaiChunks({ deltas, finishReason }));

describe('stop reasons: a tool call cut off by the output-token limit is max_tokens, never run (anthropic)', () => {
  it('a tool_use whose input the max_tokens stop cut mid-string is reported as max_tokens with the cut call, not as tool_calls', async () => {
    const partial = '{"path": "big.ts", "content": "line 1\\nline 2\\nli';
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_cut', 'write', [partial]), 'max_tokens'));
    const generation = await claude();
    expect(generation.stopReason).toBe('max_tokens');
    expect(generation.message.toolCalls).toEqual([]);
    expect(generation.truncatedToolCalls).toEqual([{ id: 'toolu_cut', name: 'write', receivedChars: partial.length }]);
  });

  it('a whole call before the cut one is kept and run; only the cut one is reported', async () => {
    replayer().replay(
      anthropicBody(
        [
          ...textBlock(0, 'Reading, then writing.'),
          ...toolUseBlock(1, 'toolu_ok', 'read_file', ['{"path": ', '"a.ts"}']),
          ...toolUseBlock(2, 'toolu_cut', 'write', ['{"path": "b.ts", "con']),
        ],
        'max_tokens',
      ),
    );
    const generation = await claude();
    expect(generation.message.content).toBe('Reading, then writing.');
    expect(generation.message.toolCalls).toEqual([{ id: 'toolu_ok', name: 'read_file', input: { path: 'a.ts' } }]);
    expect(generation.truncatedToolCalls).toEqual([{ id: 'toolu_cut', name: 'write', receivedChars: '{"path": "b.ts", "con'.length }]);
  });

  it('text cut by max_tokens (no call) stays max_tokens with nothing truncated', async () => {
    replayer().replay(anthropicBody(textBlock(0, 'The answer is forty'), 'max_tokens'));
    const generation = await claude();
    expect(generation).toMatchObject({ stopReason: 'max_tokens', message: { content: 'The answer is forty', toolCalls: [] } });
    expect(generation.truncatedToolCalls).toBeUndefined();
  });

  it('model_context_window_exceeded is a cut answer too (max_tokens)', async () => {
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_win', 'write', ['{"path": "c.ts"']), 'model_context_window_exceeded'));
    const generation = await claude();
    expect(generation.stopReason).toBe('max_tokens');
    expect(generation.truncatedToolCalls?.map((call) => call.name)).toEqual(['write']);
  });

  it('a whole tool_use under tool_use stays tool_calls (no false cut)', async () => {
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_1', 'read_file', ['{"path": "a.ts"}']), 'tool_use'));
    const generation = await claude();
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.truncatedToolCalls).toBeUndefined();
  });
});

describe('stop reasons: refusal and pause_turn (anthropic)', () => {
  it('stop_reason refusal is a refusal with its text, in one request (never retried as an empty answer)', async () => {
    replayer().replay(anthropicBody(textBlock(0, 'I cannot help with that request.'), 'refusal'));
    const generation = await claude();
    expect(generation).toMatchObject({
      stopReason: 'refusal',
      message: { content: 'I cannot help with that request.', toolCalls: [] },
      attempts: 1,
    });
    expect(replayer().requests).toHaveLength(1);
  });

  it('a refusal that stopped a tool_use mid-way runs no call', async () => {
    replayer().replay(
      anthropicBody([...textBlock(0, 'Let me'), ...toolUseBlock(1, 'toolu_r', 'write', ['{"path": "x.sh", "content": "rm'])], 'refusal'),
    );
    const generation = await claude();
    expect(generation).toMatchObject({ stopReason: 'refusal', message: { content: 'Let me', toolCalls: [] } });
  });

  it('an empty refusal (no text) is still a refusal, not an empty end', async () => {
    replayer().replay(anthropicBody([], 'refusal'));
    expect((await claude()).stopReason).toBe('refusal');
  });

  it('pause_turn is reported as pause_turn (the loop sends the content back to continue)', async () => {
    replayer().replay(anthropicBody(textBlock(0, 'Still working on it.'), 'pause_turn'));
    const generation = await claude();
    expect(generation).toMatchObject({ stopReason: 'pause_turn', message: { content: 'Still working on it.' } });
  });
});

describe('stop reasons: cut-off calls and refusals (openai-compatible)', () => {
  it('finish_reason length with partial tool-call arguments is max_tokens with the cut call, not tool_calls with invalid JSON', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_cut', name: 'write', arguments: '' }),
          callDelta(0, { arguments: '{"path": "big.ts", ' }),
          callDelta(0, { arguments: '"content": "line 1\\nli' }),
        ],
        'length',
      ),
    );
    const generation = await qwen();
    expect(generation.stopReason).toBe('max_tokens');
    expect(generation.message.toolCalls).toEqual([]);
    expect(generation.truncatedToolCalls).toEqual([
      { id: 'call_cut', name: 'write', receivedChars: '{"path": "big.ts", "content": "line 1\\nli'.length },
    ]);
  });

  it('finish_reason length after a whole call and a cut one keeps the whole one', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_a', name: 'read_file', arguments: '{"path": "a.ts"}' }),
          callDelta(1, { id: 'call_b', name: 'write', arguments: '{"path": "b' }),
        ],
        'length',
      ),
    );
    const generation = await qwen();
    expect(generation.message.toolCalls).toEqual([{ id: 'call_a', name: 'read_file', input: { path: 'a.ts' } }]);
    expect(generation.truncatedToolCalls?.map((call) => call.id)).toEqual(['call_b']);
  });

  it('a call cut before any argument arrived under length is reported, not run with empty arguments', async () => {
    replayer().replay(openaiBody([callDelta(0, { id: 'call_e', name: 'write' })], 'length'));
    const generation = await qwen();
    expect(generation).toMatchObject({
      stopReason: 'max_tokens',
      message: { toolCalls: [] },
      truncatedToolCalls: [{ name: 'write', receivedChars: 0 }],
    });
  });

  it('text cut by length (no call) stays max_tokens with nothing truncated', async () => {
    replayer().replay(openaiBody([{ content: 'The answer is forty' }], 'length'));
    const generation = await qwen();
    expect(generation).toMatchObject({ stopReason: 'max_tokens', message: { content: 'The answer is forty' } });
    expect(generation.truncatedToolCalls).toBeUndefined();
  });

  it('delta.refusal is a refusal whose text is the refusal', async () => {
    replayer().replay(openaiBody([{ refusal: "I'm sorry, " }, { refusal: 'I cannot assist with that.' }], 'stop'));
    const generation = await qwen();
    expect(generation).toMatchObject({
      stopReason: 'refusal',
      message: { content: "I'm sorry, I cannot assist with that.", toolCalls: [] },
      attempts: 1,
    });
    expect(replayer().requests).toHaveLength(1);
  });

  it('finish_reason content_filter is a refusal, with whatever text came before it', async () => {
    replayer().replay(openaiBody([{ content: 'Here is how to' }], 'content_filter'));
    expect(await qwen()).toMatchObject({ stopReason: 'refusal', message: { content: 'Here is how to', toolCalls: [] } });
  });

  it('a refusal with a tool call begun runs no call', async () => {
    replayer().replay(openaiBody([callDelta(0, { id: 'call_r', name: 'write', arguments: '{"path": "x"}' })], 'content_filter'));
    expect(await qwen()).toMatchObject({ stopReason: 'refusal', message: { toolCalls: [] } });
  });
});

describe('index reuse: openai-compatible tool-call deltas are assembled robustly', () => {
  it('a new id at a reused index starts a new call (two calls, not one merged)', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '{"path": "a.ts"}' }),
          callDelta(0, { id: 'call_2', name: 'read_file', arguments: '{"path": ' }),
          callDelta(0, { arguments: '"b.ts"}' }),
        ],
        'tool_calls',
      ),
    );
    const generation = await qwen();
    expect(generation.message.toolCalls).toEqual([
      { id: 'call_1', name: 'read_file', input: { path: 'a.ts' } },
      { id: 'call_2', name: 'read_file', input: { path: 'b.ts' } },
    ]);
  });

  it('a name sent again in a later delta is not appended (no read_fileread_file)', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '' }),
          callDelta(0, { name: 'read_file', arguments: '{"path": ' }),
          callDelta(0, { name: 'read_file', arguments: '"a.ts"}' }),
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_1', name: 'read_file', input: { path: 'a.ts' } }]);
  });

  it('a name streamed in fragments is still joined', async () => {
    replayer().replay(
      openaiBody(
        [callDelta(0, { id: 'call_1', name: 'read_' }), callDelta(0, { name: 'file', arguments: '{"path": "a.ts"}' })],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls.map((call) => call.name)).toEqual(['read_file']);
  });

  it('a finished call replayed under its id (arguments again, in one delta) is not duplicated', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '{"path": "a.ts"}' }),
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '{"path": "a.ts"}' }),
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_1', name: 'read_file', input: { path: 'a.ts' } }]);
  });

  it('a finished call replayed under its id with the arguments in later id-less deltas is not appended to', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '{"path": "a.ts"}' }),
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '' }),
          callDelta(0, { arguments: '{"path": ' }),
          callDelta(0, { arguments: '"a.ts"}' }),
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_1', name: 'read_file', input: { path: 'a.ts' } }]);
  });

  it('an id sent on every delta of one call is a continuation, assembled once', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_1', name: 'write', arguments: '{"path": "n.md", ' }),
          callDelta(0, { id: 'call_1', arguments: '"content": "# notes' }),
          callDelta(0, { id: 'call_1', arguments: '\\n"}' }),
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_1', name: 'write', input: { path: 'n.md', content: '# notes\n' } }]);
  });

  it('parallel calls at their own indexes, interleaved, stay apart', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_a', name: 'read_file', arguments: '{"path": ' }),
          callDelta(1, { id: 'call_b', name: 'read_file', arguments: '{"path": ' }),
          callDelta(0, { arguments: '"a.ts"}' }),
          callDelta(1, { arguments: '"b.ts"}' }),
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls.map((call) => [call.id, call.input])).toEqual([
      ['call_a', { path: 'a.ts' }],
      ['call_b', { path: 'b.ts' }],
    ]);
  });

  it('a replayed call at another index is still recognised by its id', async () => {
    replayer().replay(
      openaiBody(
        [
          callDelta(0, { id: 'call_1', name: 'read_file', arguments: '{"path": "a.ts"}' }),
          callDelta(1, { id: 'call_1', name: 'read_file', arguments: '{"path": "a.ts"}' }),
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toHaveLength(1);
  });
});

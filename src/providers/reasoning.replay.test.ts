// reasoning: recorded-shape streams replayed byte for byte through the real SDKs; what
// bhrain keeps of the model's reasoning and what it sends back on the next request, seen at the server
import { describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse, openaiChunks, openaiSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import type { BrainAtomGenerateInput } from '../core/contract/BrainAtom.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainMessage, BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { asPlaintextEpisode } from '../core/contract/asPlaintext.js';
import { BadRequestError } from '../core/contract/errors.js';
import { DEFAULT_MAX_OUTPUT_TOKENS } from './constants.js';
import { genBrainAtom } from './genBrainAtom.js';

const { replayer, contextFor } = useRawReplay();
const context = (): BrainContext => contextFor({ maxRetries: 0 });
const tools: BrainToolDefinition[] = [
  {
    name: 'read_file',
    description: 'reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];
const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+Kc2LiXgxdAUdeUiWRLiQ2yzWQ0Wb3WfYbuQX3QEB8qXgd7SRYBQ==';
const REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfHXwmtaW8xvZmWz3b/SNxlG2Tc1IjmqGK6LSrgT89ApBk=';

const anthropicBody = (content: Array<{ type: string } & Record<string, unknown>>, stopReason: string) =>
  anthropicSse(anthropicMessageEvents({ content, stopReason }));
/** a thinking block as anthropic streams it: empty start, thinking deltas, one signature_delta before the stop */
const thinkingBlock = (index: number, parts: string[], signature: string) => [
  { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
  ...parts.map((thinking) => ({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } })),
  { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } },
  { type: 'content_block_stop', index },
];
const redactedBlock = (index: number, data: string) => [
  { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data } },
  { type: 'content_block_stop', index },
];
const textBlock = (index: number, text: string) => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
  { type: 'content_block_stop', index },
];
const toolUseBlock = (index: number, id: string, name: string, json: string) => [
  { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
  { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } },
  { type: 'content_block_stop', index },
];
const openaiBody = (deltas: Array<Record<string, unknown>>, finishReason: string) => openaiSse(openaiChunks({ deltas, finishReason }));
const callDelta = (id: string, name: string, args: string) => ({
  tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args } }],
});

/** two turns as the loop runs them: the first generation, its tool result, then the next request */
const twoTurns = async (atom: ReturnType<typeof genBrainAtom>, extra: Partial<BrainAtomGenerateInput> = {}) => {
  const messages: BrainMessage[] = [{ role: 'user', content: 'what is in a.ts?' }];
  const first = await atom.generate({ messages, tools, ...extra }, context());
  messages.push(first.message);
  for (const call of first.message.toolCalls)
    messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: 'export const a = 1;', isError: false });
  const second = await atom.generate({ messages, tools, ...extra }, context());
  return { first, second };
};

describe('reasoning: claude extended thinking can be enabled and its signed blocks go back with the tool results', () => {
  it('thinking { budgetTokens } sends thinking enabled with the budget, and max_tokens leaves the answer its share above it', async () => {
    replayer().replay(anthropicBody(textBlock(0, 'ok'), 'end_turn'));
    await genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 2048 } }).generate(
      { messages: [{ role: 'user', content: 'hi' }] },
      context(),
    );
    const body = replayer().requests[0].body as any;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body.max_tokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS + 2048);
  });

  it('without thinking, or with off, the request carries no thinking field (unchanged)', async () => {
    replayer().replay(anthropicBody(textBlock(0, 'ok'), 'end_turn'), anthropicBody(textBlock(0, 'ok'), 'end_turn'));
    await genBrainAtom({ slug: 'claude/haiku' }).generate({ messages: [{ role: 'user', content: 'hi' }] }, context());
    await genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 2048 } }).generate(
      { messages: [{ role: 'user', content: 'hi' }], thinking: 'off' },
      context(),
    );
    expect(replayer().requests.map((request) => (request.body as any).thinking)).toEqual([undefined, undefined]);
    expect((replayer().requests[1].body as any).max_tokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
  });

  it('a thinking turn with a tool call: thinking and redacted_thinking blocks, signatures intact, go back first in that assistant turn', async () => {
    replayer().replay(
      anthropicBody(
        [
          ...thinkingBlock(0, ['The user wants a.ts. ', 'I should read it.'], SIGNATURE),
          ...redactedBlock(1, REDACTED),
          ...textBlock(2, 'Reading it.'),
          ...toolUseBlock(3, 'toolu_1', 'read_file', '{"path":"a.ts"}'),
        ],
        'tool_use',
      ),
      anthropicBody([...thinkingBlock(0, ['It exports a = 1.'], `${SIGNATURE}2`), ...textBlock(1, 'a.ts exports a = 1.')], 'end_turn'),
    );
    const { first, second } = await twoTurns(genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 1024 } }));
    expect(first.reasoning).toBe('The user wants a.ts. I should read it.');
    expect(first.message.content).toBe('Reading it.');
    expect(first.message.reasoning?.blocks).toEqual([
      { type: 'thinking', thinking: 'The user wants a.ts. I should read it.', signature: SIGNATURE },
      { type: 'redacted_thinking', data: REDACTED },
    ]);
    const sent = (replayer().requests[1].body as any).messages;
    expect(sent[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants a.ts. I should read it.', signature: SIGNATURE },
        { type: 'redacted_thinking', data: REDACTED },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
      ],
    });
    expect(sent[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1' });
    // the answer never holds the thinking
    expect(second.message.content).toBe('a.ts exports a = 1.');
    expect(second.reasoning).toBe('It exports a = 1.');
  });

  it('a thinking turn with only a tool call (no text) sends [thinking, tool_use], with no empty text block between', async () => {
    replayer().replay(
      anthropicBody(
        [...thinkingBlock(0, ['Read it.'], SIGNATURE), ...toolUseBlock(1, 'toolu_2', 'read_file', '{"path":"a.ts"}')],
        'tool_use',
      ),
      anthropicBody(textBlock(0, 'done'), 'end_turn'),
    );
    await twoTurns(genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 4000 } }));
    expect((replayer().requests[1].body as any).messages[1].content.map((block: any) => block.type)).toEqual(['thinking', 'tool_use']);
  });

  it('thinking streams to onReasoningDelta, never to onTextDelta', async () => {
    replayer().replay(anthropicBody([...thinkingBlock(0, ['Hmm, ', 'two plus two.'], SIGNATURE), ...textBlock(1, '4')], 'end_turn'));
    const text: string[] = [];
    const reasoning: string[] = [];
    await genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 1024 } }).generate(
      {
        messages: [{ role: 'user', content: '2+2?' }],
        onTextDelta: (delta) => text.push(delta),
        onReasoningDelta: (delta) => reasoning.push(delta),
      },
      context(),
    );
    expect(text).toEqual(['4']);
    expect(reasoning).toEqual(['Hmm, ', 'two plus two.']);
  });

  it('a budget below 1024 fails when the atom is made, naming the flag and the minimum; no request is sent', () => {
    expect(() => genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 500 } })).toThrow(BadRequestError);
    expect(() => genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 500 } })).toThrow(/--thinking '500'.*at least 1024/);
    expect(replayer().requests).toHaveLength(0);
  });

  it("a budget the model's output limit cannot hold fails before the request, naming both numbers", async () => {
    const atom = genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 64_000 } });
    await expect(atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, context())).rejects.toThrow(
      /--thinking 64000 does not fit.*64000 output tokens/,
    );
    expect(replayer().requests).toHaveLength(0);
  });
});

describe('reasoning: reasoning_content is kept per assistant turn and sent back on the next request (openai-compatible)', () => {
  it('a reasoning_content turn with a tool call: exposed as reasoning, sent back as reasoning_content on that assistant message', async () => {
    replayer().replay(
      openaiBody(
        [{ reasoning_content: 'I need ' }, { reasoning_content: 'to read a.ts.' }, callDelta('call_1', 'read_file', '{"path":"a.ts"}')],
        'tool_calls',
      ),
      openaiBody([{ reasoning_content: 'It is one line.' }, { content: 'a.ts exports a.' }], 'stop'),
    );
    const { first, second } = await twoTurns(genBrainAtom({ slug: 'qwen/qwen-plus' }));
    expect(first.reasoning).toBe('I need to read a.ts.');
    expect(first.message).toMatchObject({ content: '', reasoning: { text: 'I need to read a.ts.' } });
    const sent = (replayer().requests[1].body as any).messages;
    expect(sent[1]).toMatchObject({
      role: 'assistant',
      content: null,
      reasoning_content: 'I need to read a.ts.',
      tool_calls: [{ id: 'call_1' }],
    });
    expect(second).toMatchObject({ reasoning: 'It is one line.', message: { content: 'a.ts exports a.' } });
  });

  it('delta.reasoning (newer vLLM, OpenRouter) is kept the same way', async () => {
    replayer().replay(openaiBody([{ reasoning: 'Short.' }, { content: 'Yes.' }], 'stop'));
    const generation = await genBrainAtom({ slug: 'qwen/qwen-plus' }).generate({ messages: [{ role: 'user', content: 'ok?' }] }, context());
    expect(generation).toMatchObject({ reasoning: 'Short.', message: { content: 'Yes.', reasoning: { text: 'Short.' } } });
  });

  it('a turn without reasoning sends no reasoning_content (other servers see nothing new)', async () => {
    replayer().replay(
      openaiBody([callDelta('call_1', 'read_file', '{"path":"a.ts"}')], 'tool_calls'),
      openaiBody([{ content: 'done' }], 'stop'),
    );
    await twoTurns(genBrainAtom({ slug: 'qwen/qwen-plus' }));
    expect((replayer().requests[1].body as any).messages[1]).not.toHaveProperty('reasoning_content');
  });

  it('reasoning_content streams to onReasoningDelta, never to onTextDelta', async () => {
    replayer().replay(openaiBody([{ reasoning_content: 'a' }, { reasoning_content: 'b' }, { content: 'answer' }], 'stop'));
    const text: string[] = [];
    const reasoning: string[] = [];
    await genBrainAtom({ slug: 'qwen/qwen-plus' }).generate(
      {
        messages: [{ role: 'user', content: 'q' }],
        onTextDelta: (delta) => text.push(delta),
        onReasoningDelta: (delta) => reasoning.push(delta),
      },
      context(),
    );
    expect({ text, reasoning }).toEqual({ text: ['answer'], reasoning: ['a', 'b'] });
  });

  it("thinking on a qwen atom sends DashScope's enable_thinking and thinking_budget; off sends enable_thinking false", async () => {
    replayer().replay(openaiBody([{ content: 'a' }], 'stop'), openaiBody([{ content: 'b' }], 'stop'));
    const atom = genBrainAtom({ slug: 'qwen/qwen-plus', thinking: { budgetTokens: 500 } });
    await atom.generate({ messages: [{ role: 'user', content: 'q' }] }, context());
    await atom.generate({ messages: [{ role: 'user', content: 'q' }], thinking: 'off' }, context());
    expect(replayer().requests.map((request) => [(request.body as any).enable_thinking, (request.body as any).thinking_budget])).toEqual([
      [true, 500],
      [false, undefined],
    ]);
  });
});

describe('reasoning: a <think> prefix from a server without a reasoning parser is split out of the answer', () => {
  const ask = async (deltas: string[], finishReason = 'stop') => {
    replayer().replay(
      openaiBody(
        deltas.map((content) => ({ content })),
        finishReason,
      ),
    );
    const text: string[] = [];
    const reasoning: string[] = [];
    const generation = await genBrainAtom({ slug: 'qwen/qwen-plus' }).generate(
      {
        messages: [{ role: 'user', content: 'q' }],
        tools,
        onTextDelta: (delta) => text.push(delta),
        onReasoningDelta: (delta) => reasoning.push(delta),
      },
      context(),
    );
    return { generation, shown: text.join(''), thought: reasoning.join('') };
  };

  it('<think>…</think> then the answer: reasoning apart, the answer alone, and the think text never streamed as answer text', async () => {
    const { generation, shown, thought } = await ask(['<thi', 'nk>\nLet me think', ' about it.</th', 'ink>\n\nThe answer is 4.']);
    expect(generation.message.content).toBe('The answer is 4.');
    expect(generation.reasoning).toBe('Let me think about it.');
    expect(shown).toBe('The answer is 4.');
    expect(thought).toBe('\nLet me think about it.');
  });

  it('a missing <think> opener with </think> present (as vLLM parsers handle it): the text before </think> is reasoning', async () => {
    const { generation } = await ask(['I should say hi.\n</think>\n\nHi!']);
    expect(generation.message.content).toBe('Hi!');
    expect(generation.reasoning).toBe('I should say hi.');
  });

  it('a <think> never closed (cut by the token limit) is all reasoning, no answer text', async () => {
    const { generation, shown } = await ask(['<think>Still thinking about'], 'length');
    expect(generation).toMatchObject({ stopReason: 'max_tokens', reasoning: 'Still thinking about', message: { content: '' } });
    expect(shown).toBe('');
  });

  it('a <tool_call> after the think block is still recovered as a call, with the reasoning kept', async () => {
    const { generation } = await ask([
      '<think>Read a.ts first.</think>\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.ts"}}\n</tool_call>',
    ]);
    expect(generation.message.toolCalls).toMatchObject([{ name: 'read_file', input: { path: 'a.ts' } }]);
    expect(generation.reasoning).toBe('Read a.ts first.');
    expect(generation.message.content).not.toMatch(/think/);
  });

  it('text without think tags is unchanged, streamed as it came', async () => {
    const { generation, shown } = await ask(['  Plain ', 'answer <think> in the middle stays.']);
    expect(generation.message.content).toBe('  Plain answer <think> in the middle stays.');
    expect(generation.reasoning).toBeUndefined();
    expect(shown).toBe('  Plain answer <think> in the middle stays.');
  });
});

describe('reasoning: never in episodes or their plaintext, counted in tokens and cost', () => {
  it("ask() with a thinking claude: the episode's output and plaintext hold the answer, not the thinking; usage counts what the server billed", async () => {
    replayer().replay(
      anthropicBody([...thinkingBlock(0, ['SECRET-THOUGHT weighing options.'], SIGNATURE), ...textBlock(1, 'Use a map.')], 'end_turn'),
    );
    const output = await genBrainAtom({ slug: 'claude/haiku', thinking: { budgetTokens: 1024 } }).ask({ say: 'list or map?' }, context());
    expect(output.output).toBe('Use a map.');
    expect(asPlaintextEpisode(output.episode)).not.toContain('SECRET-THOUGHT');
    expect(JSON.stringify(output.episode)).not.toContain('SECRET-THOUGHT');
    // anthropic's output_tokens include the thinking tokens (billed as output): bhrain takes them as given
    expect(output.metrics.size.tokens.output).toBe(9);
    expect(output.metrics.cost.cash?.deets.output).toBeCloseTo((9 * 5) / 1e6, 12);
  });

  it('qwen reasoning_content is not in the episode either', async () => {
    replayer().replay(openaiBody([{ reasoning_content: 'SECRET-THOUGHT' }, { content: 'Fine.' }], 'stop'));
    const output = await genBrainAtom({ slug: 'qwen/qwen-plus' }).ask({ say: 'ok?' }, context());
    expect(output.output).toBe('Fine.');
    expect(asPlaintextEpisode(output.episode)).not.toContain('SECRET-THOUGHT');
    // openai's completion_tokens include reasoning tokens (completion_tokens_details.reasoning_tokens is a part of them)
    expect(output.metrics.size.tokens.output).toBe(9);
  });
});

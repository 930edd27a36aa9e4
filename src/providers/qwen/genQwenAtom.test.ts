// qwen is the generic OpenAI-compatible provider plus qwen's middleware; what it sends and reads stays byte for
// byte what it was when qwen was its own provider
import { describe, expect, it } from 'vitest';

import { openaiChunks, openaiSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import type { BrainMessage, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { genBrainAtom } from '../genBrainAtom.js';
import { QWEN_MODELS } from '../models.js';
import { genOpenaiCompatibleAtom } from '../openai-compatible/genOpenaiCompatibleAtom.js';

const { replayer, contextFor } = useRawReplay();
const tools: BrainToolDefinition[] = [
  {
    name: 'read_file',
    description: 'reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  { name: 'write', description: 'writes', strict: true, inputSchema: { type: 'object', properties: {} } },
];
const messages: BrainMessage[] = [
  { role: 'user', content: 'go' },
  {
    role: 'assistant',
    content: 'reading',
    toolCalls: [{ id: 'c1', name: 'read_file', input: { path: 'a' } }],
    reasoning: { text: 'I think' },
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'read_file', content: 'nope', isError: true },
  { role: 'tool', toolCallId: 'c1', toolName: 'read_file', content: 'fine', isError: false },
  { role: 'assistant', content: '', toolCalls: [] },
  { role: 'system', content: 'sys2' },
];
const answer = (deltas: Array<Record<string, unknown>>, finishReason = 'stop') => openaiSse(openaiChunks({ deltas, finishReason }));

/** the request bodies main sent at f8a958a (qwen as its own provider), as the wire carried them */
const BODIES_BEFORE = [
  '{"model":"qwen-plus","max_tokens":100,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"go"},{"role":"assistant","content":"reading","reasoning_content":"I think","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"a\\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"ERROR: nope"},{"role":"tool","tool_call_id":"c1","content":"fine"},{"role":"assistant","content":null},{"role":"system","content":"sys2"}],"tools":[{"type":"function","function":{"name":"read_file","description":"reads a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},{"type":"function","function":{"name":"write","description":"writes","parameters":{"type":"object","properties":{}},"strict":true}}]}',
  '{"model":"qwen-plus","max_tokens":8192,"stream":true,"stream_options":{"include_usage":true},"enable_thinking":true,"thinking_budget":500,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"reading","reasoning_content":"I think","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"a\\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"ERROR: nope"},{"role":"tool","tool_call_id":"c1","content":"fine"},{"role":"assistant","content":null},{"role":"system","content":"sys2"}]}',
  '{"model":"some-local","max_tokens":8192,"stream":true,"stream_options":{"include_usage":true},"enable_thinking":false,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"reading","reasoning_content":"I think","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"a\\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"ERROR: nope"},{"role":"tool","tool_call_id":"c1","content":"fine"},{"role":"assistant","content":null},{"role":"system","content":"sys2"}],"tools":[{"type":"function","function":{"name":"read_file","description":"reads a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},{"type":"function","function":{"name":"write","description":"writes","parameters":{"type":"object","properties":{}},"strict":true}}]}',
  '{"model":"qwen3-coder-plus","max_tokens":8192,"stream":true,"stream_options":{"include_usage":true},"enable_thinking":true,"thinking_budget":7,"messages":[{"role":"user","content":"hi"}]}',
];

describe('qwen on the generic OpenAI-compatible provider: the wire stays as it was', () => {
  it('given requests with and without tools, thinking on, off and unset, then each body is byte for byte the one sent before', async () => {
    replayer().replay(...[1, 2, 3, 4].map(() => answer([{ content: 'ok' }])));
    await genBrainAtom({ slug: 'qwen/qwen-plus' }).generate({ system: 'be brief', messages, tools, maxOutputTokens: 100 }, contextFor());
    await genBrainAtom({ slug: 'qwen/qwen-plus', thinking: { budgetTokens: 500 } }).generate({ messages }, contextFor());
    await genBrainAtom({ slug: 'qwen/some-local', thinking: { budgetTokens: 500 } }).generate(
      { messages, thinking: 'off', tools },
      contextFor(),
    );
    await genBrainAtom({ slug: 'qwen' }).generate(
      { messages: [{ role: 'user', content: 'hi' }], thinking: { budgetTokens: 7 } },
      contextFor(),
    );
    expect(replayer().requests.map((request) => JSON.stringify(request.body))).toEqual(BODIES_BEFORE);
  });
});

describe('the generic OpenAI-compatible provider holds no qwen quirk: each is middleware of the qwen entry', () => {
  /** the provider as a later entry (an openai atom) would use it: its own creds, no middleware */
  const plain = () =>
    genOpenaiCompatibleAtom({
      slug: 'plain/qwen-plus',
      entry: QWEN_MODELS['qwen-plus'],
      description: 'an OpenAI-compatible endpoint without middleware',
      creds: {
        supplier: 'qwen',
        tokenEnvVars: [],
        keyEnvVars: ['PLAIN_API_KEY'],
        urlEnvVar: 'PLAIN_BASE_URL',
        defaultUrl: 'http://127.0.0.1:9/v1',
        needsKey: () => false,
        urlSuffixes: /\/chat\/completions$/,
        callPath: '/chat/completions',
        urlHint: 'a base URL ending in /v1',
      },
      thinking: { budgetTokens: 500 },
    });
  const thinkAndCall = '<think>plan it</think>Reading.<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>';

  it('given <think> text and a call written as text, when the plain provider reads them, then both stay answer text', async () => {
    replayer().replay(answer([{ content: thinkAndCall }]));
    const generation = await plain().generate({ messages: [{ role: 'user', content: 'go' }], tools }, contextFor());
    expect(generation).toMatchObject({ stopReason: 'end', message: { content: thinkAndCall, toolCalls: [] } });
    expect(generation.reasoning).toBeUndefined();
  });

  it('given the same answer, when the qwen atom reads it, then the <think> block is reasoning and the markup a call', async () => {
    replayer().replay(answer([{ content: thinkAndCall }]));
    const generation = await genBrainAtom({ slug: 'qwen/qwen-plus' }).generate(
      { messages: [{ role: 'user', content: 'go' }], tools },
      contextFor(),
    );
    expect(generation).toMatchObject({
      stopReason: 'tool_calls',
      reasoning: 'plan it',
      message: { content: 'Reading.', toolCalls: [{ name: 'read_file', input: { path: 'a' } }] },
    });
  });

  it('given a thinking option, when the plain provider sends it, then the body has no DashScope field', async () => {
    replayer().replay(answer([{ content: 'ok' }]));
    await plain().generate({ messages: [{ role: 'user', content: 'go' }] }, contextFor());
    expect(Object.keys(replayer().requests[0].body as object)).toEqual(['model', 'max_tokens', 'stream', 'stream_options', 'messages']);
  });
});

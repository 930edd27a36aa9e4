// streams recorded from OpenAI's API by the openai-node SDK's own tests (test/fixtures/openai-node/README.md
// names the file and commit of each), replayed byte for byte over HTTP through the real `openai` SDK and the openai atom
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

import { openaiChunks, openaiSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import type { BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { genBrainAtom } from '../genBrainAtom.js';

const { replayer, contextFor } = useRawReplay();
const fixture = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`../../../test/fixtures/openai-node/${name}.sse`, import.meta.url)), 'utf8');
const ask = { messages: [{ role: 'user' as const, content: "What's the weather like in SF?" }] };

/**
 * customToolChunks() of openai-node tests/lib/ChatCompletionStream.test.ts at 7b7d6ca71130d37ec09792c50056b47861f2eccf
 * (lines 48-91), as they are: a custom tool's call at index 0 and a strict function tool's call at index 1, one stream
 */
const customToolChunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: 'chatcmpl-custom-tools',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-5.5',
  choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
});
const customToolChunks = () => [
  customToolChunk({
    role: 'assistant',
    tool_calls: [{ index: 0, id: 'call_custom_123', type: 'custom', custom: { name: 'code_exec', input: '' } }],
  }),
  customToolChunk({ tool_calls: [{ index: 0, custom: { input: 'print("hel' } }] }),
  customToolChunk({ tool_calls: [{ index: 0, custom: { input: 'lo")\nreturn 42' } }] }),
  customToolChunk({
    tool_calls: [{ index: 1, id: 'call_function_456', type: 'function', function: { name: 'get_weather', arguments: '' } }],
  }),
  customToolChunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":' } }] }),
  customToolChunk({ tool_calls: [{ index: 1, function: { arguments: '"SF"}' } }] }),
  customToolChunk({}, 'tool_calls'),
];

const weather: BrainToolDefinition = {
  name: 'get_weather',
  description: 'weather of a city',
  strict: true,
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

describe('openai: recorded openai-node streams replay byte for byte and parse as the SDK expects', () => {
  it("openai: the refusal stream (delta.refusal with logprobs) is a refusal whose text is the model's, with its usage", async () => {
    replayer().replay(fixture('refusal-logprobs'));
    const deltas: string[] = [];
    const generation = await genBrainAtom({ slug: 'openai/gpt-4o' }).generate(
      { ...ask, onTextDelta: (text) => deltas.push(text) },
      contextFor(),
    );
    expect(generation.stopReason).toBe('refusal');
    expect(generation.message.content).toBe("I'm very sorry, but I can't assist with that request.");
    expect(generation.message.toolCalls).toEqual([]);
    // a refusal is never streamed as answer text
    expect(deltas).toEqual([]);
    expect(generation.tokens).toEqual({ input: 17, output: 13, cache: { get: 0, set: 0 } });
    // gpt-4o's list price: 17 × 2.5 + 13 × 10 per million
    expect(generation.cash?.total).toBeCloseTo((17 * 2.5 + 13 * 10) / 1e6, 12);
  });

  it('openai: the content-logprobs stream (logprobs on every delta) is its exact content, ended by stop', async () => {
    replayer().replay(fixture('content-logprobs'));
    const generation = await genBrainAtom({ slug: 'openai/gpt-4o' }).generate(ask, contextFor());
    expect(generation.stopReason).toBe('end');
    expect(generation.message.content).toBe('{"city":"San Francisco","units":"f"}');
    expect(generation.tokens).toEqual({ input: 17, output: 10, cache: { get: 0, set: 0 } });
  });

  it('openai: the plain stream and the one with leading newline chunks keep their content exactly', async () => {
    replayer().replay(fixture('works'), fixture('leading-newline'));
    const atom = genBrainAtom({ slug: 'openai/gpt-4o' });
    expect((await atom.generate(ask, contextFor())).message.content).toBe('{"city":"San Francisco","units":"c"}');
    expect((await atom.generate(ask, contextFor())).message.content).toBe('\n\n{"city":"San Francisco","units":"c"}');
  });

  it('openai: the fixtures are served byte for byte (the replay adds and drops nothing)', async () => {
    const body = fixture('refusal-logprobs');
    expect(body.startsWith('data: {"id":"chatcmpl-9tZXGacdbmJYO8K50haE4OauaJmPn"')).toBe(true);
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    replayer().replay(body);
    const response = await fetch(`${replayer().openaiUrl}/chat/completions`, { method: 'POST', body: '{}' });
    expect(await response.text()).toBe(body);
  });

  it('openai: the parallel tool-call stream keeps both calls apart, in index order; the strict function call parses, the custom call reaches the session as a call, never dropped', async () => {
    replayer().replay(openaiSse(customToolChunks()));
    const generation = await genBrainAtom({ slug: 'openai/gpt-5' }).generate(
      { messages: [{ role: 'user', content: 'Run some code and check the weather' }], tools: [weather] },
      contextFor(),
    );
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.message.toolCalls.map((call) => [call.id, call.name])).toEqual([
      ['call_custom_123', 'code_exec'],
      ['call_function_456', 'get_weather'],
    ]);
    expect(generation.message.toolCalls[1]).toMatchObject({ input: { city: 'SF' } });
    expect(generation.message.toolCalls[1]).not.toHaveProperty('inputError');
    // code_exec was never offered and its input is not JSON: the session answers it as an error the model can read
    expect(generation.message.toolCalls[0]).toHaveProperty('inputError');
    // the strict schema went out as given
    expect(replayer().requests[0].body.tools[0].function).toMatchObject({ name: 'get_weather', strict: true });
  });

  it('openai: finish_reason length is stopReason max_tokens; a call it cut mid-arguments is reported, never run', async () => {
    replayer().replay(
      openaiSse(openaiChunks({ deltas: [{ content: 'The answer is forty' }], finishReason: 'length', model: 'gpt-5' })),
      openaiSse(
        openaiChunks({
          deltas: [
            { tool_calls: [{ index: 0, id: 'call_cut', type: 'function', function: { name: 'get_weather', arguments: '{"city": "S' } }] },
          ],
          finishReason: 'length',
          model: 'gpt-5',
        }),
      ),
    );
    const atom = genBrainAtom({ slug: 'openai/gpt-5' });
    const text = await atom.generate(ask, contextFor());
    expect([text.stopReason, text.message.content]).toEqual(['max_tokens', 'The answer is forty']);
    const cut = await atom.generate({ ...ask, tools: [weather] }, contextFor());
    expect(cut.stopReason).toBe('max_tokens');
    expect(cut.message.toolCalls).toEqual([]);
    expect(cut.truncatedToolCalls).toEqual([{ id: 'call_cut', name: 'get_weather', receivedChars: 11 }]);
  });
});

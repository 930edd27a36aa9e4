// Proves the stand-in against the REAL @anthropic-ai/sdk and openai SDKs over HTTP.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GENERATION_PROMPT_TOKENS } from './cache.js';
import { startStandin, type Standin, type StandinRequest } from './standin.js';

const MODEL = 'claude-standin-1';
const OPENAI_MODEL = 'gpt-standin-1';
/** A system prompt well above the 1024-token cache minimum (~2000 tokens). */
const LONG_SYSTEM = 'You are a careful assistant. Follow the house rules exactly. '.repeat(130);

let standin: Standin;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  standin = await startStandin();
  anthropic = new Anthropic({ apiKey: 'test', baseURL: standin.url, maxRetries: 0 });
  openai = new OpenAI({ apiKey: 'test', baseURL: standin.openaiUrl, maxRetries: 0 });
});
afterAll(async () => {
  await standin.close();
});
beforeEach(() => standin.reset());

const ask = (text: string) => ({ model: MODEL, max_tokens: 256, messages: [{ role: 'user' as const, content: text }] });
const chat = (text: string) => ({ model: OPENAI_MODEL, messages: [{ role: 'user' as const, content: text }] });

describe('anthropic', () => {
  it('answers text, non-streaming', async () => {
    standin.script({ text: 'Hello from the stand-in' });
    const message = await anthropic.messages.create(ask('hi'));
    expect(message.type).toBe('message');
    expect(message.id).toMatch(/^msg_/);
    expect(message.model).toBe(MODEL);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the stand-in' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.cache_read_input_tokens).toBe(0);
    const [request] = standin.requests;
    expect(request).toMatchObject({ protocol: 'anthropic', method: 'POST', path: '/v1/messages', stream: false });
    // @anthropic-ai/sdk 1.x sends the api key as `Authorization: Bearer`, not x-api-key
    expect(request.headers.authorization).toBe('Bearer test');
    expect(request.headers['anthropic-version']).toBeDefined();
    expect(request.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(request.usage).toEqual({ input: message.usage.input_tokens, output: message.usage.output_tokens, cacheRead: 0, cacheWrite: 0 });
    expect(standin.pending()).toBe(0);
  });

  it('streams text in several deltas', async () => {
    standin.script({ text: 'Streaming is really partial here.' });
    const stream = anthropic.messages.stream(ask('hi'));
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join('')).toBe('Streaming is really partial here.');
    expect(message.content).toEqual([{ type: 'text', text: 'Streaming is really partial here.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(standin.requests[0].stream).toBe(true);
  });

  it('streams raw events in the real order (ping filtered by the SDK)', async () => {
    standin.script({ text: 'abc' });
    const stream = await anthropic.messages.create({ ...ask('hi'), stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('streams a tool call that the SDK stream helper assembles', async () => {
    const input = { path: 'src/index.ts', lines: [1, 2, 3], note: 'a longer value so the JSON is split in chunks' };
    standin.script({ text: 'Let me read it.', toolCalls: [{ name: 'read_file', input }] });
    const stream = anthropic.messages.stream({
      ...ask('read it'),
      tools: [
        { name: 'read_file', description: 'read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
      ],
    });
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const message = await stream.finalMessage();
    expect(partials.filter((p) => p !== '').length).toBeGreaterThan(2);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0]).toEqual({ type: 'text', text: 'Let me read it.' });
    const tool = message.content[1];
    expect(tool.type).toBe('tool_use');
    if (tool.type !== 'tool_use') throw new Error('expected tool_use');
    expect(tool.name).toBe('read_file');
    expect(tool.id).toMatch(/^toolu_/);
    expect(tool.input).toEqual(input);
  });

  it('returns tool calls non-streaming with scripted ids', async () => {
    standin.script({ toolCalls: [{ id: 'toolu_fixed', name: 'a', input: { x: 1 } }, { name: 'b' }] });
    const message = await anthropic.messages.create(ask('go'));
    expect(message.content).toMatchObject([
      { type: 'tool_use', id: 'toolu_fixed', name: 'a', input: { x: 1 } },
      { type: 'tool_use', name: 'b', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('streams malformed rawArguments verbatim as partial_json', async () => {
    standin.script({ toolCalls: [{ name: 'edit', rawArguments: '{"path": "a.ts", "text": "unterminated' }] });
    const stream = await anthropic.messages.create({ ...ask('go'), stream: true });
    let json = '';
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') json += event.delta.partial_json;
    }
    expect(json).toBe('{"path": "a.ts", "text": "unterminated');
  });

  it('the SDK stream helper partial-parses malformed tool JSON instead of throwing', async () => {
    standin.script({ toolCalls: [{ name: 'edit', rawArguments: '{"path": "a.ts", "text": "unterminated' }] });
    const message = await anthropic.messages.stream(ask('go')).finalMessage();
    // the unterminated field is silently dropped: callers must validate tool input themselves
    expect(message.content[0]).toMatchObject({ type: 'tool_use', name: 'edit', input: { path: 'a.ts' } });
  });

  it('latencyMs delays every response', async () => {
    const slow = await startStandin({ latencyMs: 40 });
    try {
      slow.script({ text: 'slow' });
      const client = new Anthropic({ apiKey: 'test', baseURL: slow.url, maxRetries: 0 });
      const started = Date.now();
      expect((await client.messages.create(ask('hi'))).content[0]).toMatchObject({ text: 'slow' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    } finally {
      await slow.close();
    }
  });

  it('ignores a ?beta=true query (as the Claude Code CLI sends) but records it', async () => {
    standin.script({ text: 'beta ok' });
    const message = await anthropic.messages.create(ask('hi'), { query: { beta: 'true' } });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'beta ok' });
    expect(standin.requests[0].path).toBe('/v1/messages');
    expect(standin.requests[0].query).toEqual({ beta: 'true' });
  });

  it('counts tokens without recording or consuming a turn', async () => {
    standin.script({ text: 'unused' });
    const count = await anthropic.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(400) }] });
    expect(count.input_tokens).toBeGreaterThanOrEqual(100);
    expect(standin.requests).toHaveLength(0);
    expect(standin.pending()).toBe(1);
  });
});

describe('anthropic: faults and errors', () => {
  it('fails fast with a clear 400 when the queue is empty', async () => {
    const error = await anthropic.messages.create(ask('hi')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((error as Error).message)).toContain('stand-in: no scripted turn left for request #1 (/v1/messages)');
    expect(standin.requests[0].usage).toBeNull();
  });

  it('throws (not hangs) when the stream is cut mid text or mid tool JSON', async () => {
    for (const cut of ['text', 'tool'] as const) {
      standin.reset();
      standin.script({ cut });
      const stream = await anthropic.messages.create({ ...ask('hi'), stream: true });
      const seen: string[] = [];
      const error = await (async () => {
        for await (const event of stream) seen.push(event.type);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(seen).toContain('content_block_delta');
      expect(seen).not.toContain('message_stop');
    }
  });

  it('a stalled stream sends a few deltas, then nothing, until the client aborts; the stand-in lets go', async () => {
    for (const stall of ['text', 'tool'] as const) {
      standin.reset();
      standin.script({ stall }, { text: 'next' });
      const controller = new AbortController();
      const stream = await anthropic.messages.create({ ...ask('hi'), stream: true }, { signal: controller.signal });
      const seen: string[] = [];
      const timer = setTimeout(() => controller.abort(), 200);
      // the SDK ends an aborted stream quietly (no throw): what proves the stall is that it never finished
      await (async () => {
        for await (const event of stream) seen.push(event.type);
      })();
      clearTimeout(timer);
      expect(controller.signal.aborted).toBe(true);
      expect(seen).toContain('content_block_delta');
      expect(seen).not.toContain('message_stop');
      expect((await anthropic.messages.create(ask('again'))).content[0]).toMatchObject({ text: 'next' });
    }
  });

  it('close() ends a stall that no client ever abandons, without hanging', async () => {
    const own = await startStandin();
    own.script({ stall: 'text' });
    const client = new Anthropic({ apiKey: 'test', baseURL: own.url, maxRetries: 0 });
    const stream = await client.messages.create({ ...ask('hi'), stream: true });
    const drained = (async () => {
      for await (const _ of stream);
    })().catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await drained).toBeInstanceOf(Error);
  });

  it('the stream helper rejects finalMessage on a cut stream', async () => {
    standin.script({ cut: 'tool' });
    await expect(anthropic.messages.stream(ask('hi')).finalMessage()).rejects.toThrow();
  });

  it('surfaces reset connections and invalid bodies as errors', async () => {
    const quiet = new Anthropic({ apiKey: 'test', baseURL: standin.url, maxRetries: 0, logLevel: 'off' });
    standin.script({ reset: true }, { invalidBody: true }, { invalidBody: true });
    await expect(quiet.messages.create(ask('a'))).rejects.toBeInstanceOf(Anthropic.APIConnectionError);
    await expect(quiet.messages.create(ask('b'))).rejects.toThrow(SyntaxError);
    await expect(quiet.messages.stream(ask('c')).finalMessage()).rejects.toThrow(/not valid JSON/);
    expect(standin.requests).toHaveLength(3);
  });

  it('answers a scripted overflow and an over-limit request with the real context error', async () => {
    standin.script({ contextOverflow: true });
    const error = await anthropic.messages.create(ask('hi')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toMatch(/prompt is too long: \d+ tokens > 200000 maximum/);
    const limited = await startStandin({ contextLimitTokens: 50 });
    try {
      limited.script({ text: 'never' });
      const client = new Anthropic({ apiKey: 'test', baseURL: limited.url, maxRetries: 0 });
      const overflow = await client.messages.create(ask('y'.repeat(400))).catch((e: unknown) => e);
      expect((overflow as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
      expect((overflow as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringMatching(/^prompt is too long: \d+ tokens > 50 maximum$/) },
      });
      expect(limited.pending()).toBe(1);
    } finally {
      await limited.close();
    }
  });

  it('maps scripted statuses to the real error types', async () => {
    standin.script({ error: { status: 529 } }, { error: { status: 403, message: 'nope' } });
    const overloaded = await anthropic.messages.create(ask('a')).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(Anthropic.APIError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'overloaded_error' } });
    const denied = await anthropic.messages.create(ask('b')).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((denied as Error).message).toContain('nope');
  });
});

describe('openai', () => {
  it('answers text, non-streaming', async () => {
    standin.script({ text: 'Hello, OpenAI client', usage: { outputTokens: 7 } });
    const completion = await openai.chat.completions.create(chat('hi'));
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello, OpenAI client' });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ completion_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } });
    const [request] = standin.requests;
    expect(request).toMatchObject({ protocol: 'openai', path: '/v1/chat/completions', stream: false });
    expect(request.headers.authorization).toBe('Bearer test');
  });

  it('streams text with a usage chunk when asked', async () => {
    standin.script({ text: 'Streaming from the OpenAI side.' });
    const stream = await openai.chat.completions.create({ ...chat('hi'), stream: true, stream_options: { include_usage: true } });
    let text = '';
    let pieces = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) {
        text += choice.delta.content;
        pieces++;
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Streaming from the OpenAI side.');
    expect(pieces).toBeGreaterThan(2);
    expect(finish).toBe('stop');
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('streams tool calls that accumulate into the right tool_calls', async () => {
    const input = { city: 'Paris', units: 'metric', days: [1, 2, 3] };
    standin.script({
      toolCalls: [
        { name: 'weather', input },
        { id: 'call_fixed', name: 'noop', rawArguments: '{"broken":' },
      ],
    });
    const stream = await openai.chat.completions.create({ ...chat('weather?'), stream: true });
    const calls: Array<{ id?: string; name?: string; arguments: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const call = (calls[delta.index] ??= { arguments: '' });
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(calls).toHaveLength(2);
    expect(calls[0].id).toMatch(/^call_/);
    expect(calls[0].name).toBe('weather');
    expect(JSON.parse(calls[0].arguments)).toEqual(input);
    expect(calls[1]).toEqual({ id: 'call_fixed', name: 'noop', arguments: '{"broken":' });
  });

  it('the SDK stream helper assembles tool calls too', async () => {
    standin.script({ toolCalls: [{ name: 'weather', input: { city: 'Oslo' } }] });
    const completion = await openai.chat.completions.stream(chat('weather?')).finalChatCompletion();
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls).toMatchObject([
      { type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);
  });

  it('returns tool calls non-streaming with null content', async () => {
    standin.script({ toolCalls: [{ name: 'weather', input: { city: 'Rome' } }] });
    const completion = await openai.chat.completions.create(chat('weather?'));
    expect(completion.choices[0].message.content).toBeNull();
    expect(completion.choices[0].message.tool_calls).toMatchObject([
      { type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
    ]);
  });

  it('a stalled stream sends a few chunks, then nothing, until the client aborts', async () => {
    for (const stall of ['text', 'tool'] as const) {
      standin.reset();
      standin.script({ stall });
      const controller = new AbortController();
      const stream = await openai.chat.completions.create({ ...chat('hi'), stream: true }, { signal: controller.signal });
      const finishes: Array<string | null | undefined> = [];
      const timer = setTimeout(() => controller.abort(), 200);
      // the SDK ends an aborted stream quietly (no throw): what proves the stall is that it never finished
      await (async () => {
        for await (const chunk of stream) finishes.push(chunk.choices[0]?.finish_reason);
      })();
      clearTimeout(timer);
      expect(controller.signal.aborted).toBe(true);
      expect(finishes.length).toBeGreaterThan(1);
      expect(finishes.every((finish) => !finish)).toBe(true);
    }
  });

  it('throws (not hangs) when the stream is cut', async () => {
    for (const cut of ['text', 'tool'] as const) {
      standin.reset();
      standin.script({ cut });
      const stream = await openai.chat.completions.create({ ...chat('hi'), stream: true });
      let chunks = 0;
      const error = await (async () => {
        for await (const _ of stream) chunks++;
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(chunks).toBeGreaterThan(1);
    }
  });

  it('surfaces reset connections, invalid bodies and a cut non-streaming body as errors', async () => {
    const quiet = new OpenAI({ apiKey: 'test', baseURL: standin.openaiUrl, maxRetries: 0, logLevel: 'off' });
    standin.script({ reset: true }, { invalidBody: true }, { invalidBody: true }, { cut: 'text' });
    await expect(quiet.chat.completions.create(chat('a'))).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    await expect(quiet.chat.completions.create(chat('b'))).rejects.toThrow(SyntaxError);
    const stream = await quiet.chat.completions.create({ ...chat('c'), stream: true });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow(/not valid JSON/);
    await expect(quiet.chat.completions.create(chat('d'))).rejects.toThrow('terminated');
    expect(standin.requests.map((r) => r.usage === null)).toEqual([true, true, true, false]);
  });

  it('answers the real context_length_exceeded error', async () => {
    standin.script({ contextOverflow: true });
    const error = await openai.chat.completions.create(chat('hi')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('context_length_exceeded');
    expect((error as Error).message).toMatch(
      /This model's maximum context length is 128000 tokens\. However, your messages resulted in \d+ tokens\./,
    );
  });

  it('fails fast with a clear 400 when the queue is empty', async () => {
    await expect(openai.chat.completions.create(chat('hi'))).rejects.toThrow(
      'stand-in: no scripted turn left for request #1 (/v1/chat/completions)',
    );
  });
});

describe('retries and auth', () => {
  it('429 with retry-after is retried by both SDKs and recorded twice', async () => {
    const retryingAnthropic = new Anthropic({ apiKey: 'test', baseURL: standin.url, maxRetries: 2 });
    standin.script({ error: { status: 429, retryAfterMs: 10, retryAfterSeconds: 0 } }, { text: 'after retry' });
    const message = await retryingAnthropic.messages.create(ask('hi'));
    expect(message.content[0]).toMatchObject({ text: 'after retry' });
    expect(standin.requests).toHaveLength(2);
    expect(standin.requests[0].usage).toBeNull();
    expect(standin.requests[1].headers['x-stainless-retry-count']).toBe('1');

    standin.reset();
    const retryingOpenAI = new OpenAI({ apiKey: 'test', baseURL: standin.openaiUrl, maxRetries: 2 });
    standin.script({ error: { status: 429, retryAfterMs: 10 } }, { text: 'after retry' });
    const completion = await retryingOpenAI.chat.completions.create(chat('hi'));
    expect(completion.choices[0].message.content).toBe('after retry');
    expect(standin.requests).toHaveLength(2);
  });

  it('without retries the SDK throws RateLimitError', async () => {
    standin.script({ error: { status: 429, retryAfterSeconds: 1 } });
    await expect(anthropic.messages.create(ask('hi'))).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });

  it('rejects a wrong key with 401 in each protocol (AuthenticationError)', async () => {
    const locked = await startStandin({ apiKey: 'secret' });
    try {
      locked.script({ text: 'anthropic ok' }, { text: 'openai ok' });
      const wrongAnthropic = new Anthropic({ apiKey: 'wrong', baseURL: locked.url, maxRetries: 0 });
      const wrongOpenAI = new OpenAI({ apiKey: 'wrong', baseURL: locked.openaiUrl, maxRetries: 0 });
      await expect(wrongAnthropic.messages.create(ask('hi'))).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
      await expect(wrongOpenAI.chat.completions.create(chat('hi'))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      expect(locked.pending()).toBe(2);
      const rightAnthropic = new Anthropic({ apiKey: 'secret', baseURL: locked.url, maxRetries: 0 });
      const rightOpenAI = new OpenAI({ apiKey: 'secret', baseURL: locked.openaiUrl, maxRetries: 0 });
      expect((await rightAnthropic.messages.create(ask('hi'))).content[0]).toMatchObject({ text: 'anthropic ok' });
      expect((await rightOpenAI.chat.completions.create(chat('hi'))).choices[0].message.content).toBe('openai ok');
      // anthropic also accepts the classic x-api-key header (the Claude Code CLI sends it)
      const raw = (key: string) =>
        fetch(`${locked.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'x-api-key': key }, body: JSON.stringify(ask('hi')) });
      expect((await raw('secret')).status).toBe(200);
      const refused = await raw('wrong');
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    } finally {
      await locked.close();
    }
  });

  it('a delayed turn lets the client time out and the stand-in stops waiting', async () => {
    const impatient = new Anthropic({ apiKey: 'test', baseURL: standin.url, maxRetries: 0, timeout: 100 });
    standin.script({ delayMs: 10_000, then: { text: 'too late' } }, { text: 'next' });
    const started = Date.now();
    await expect(impatient.messages.create(ask('hi'))).rejects.toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await anthropic.messages.create(ask('again'))).content[0]).toMatchObject({ text: 'next' });
  });

  it('a short delay still answers', async () => {
    standin.script({ delayMs: 30, then: { text: 'patient' } });
    const started = Date.now();
    expect((await anthropic.messages.create(ask('hi'))).content[0]).toMatchObject({ text: 'patient' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});

describe('prompt cache accounting', () => {
  const cachedSystem = [{ type: 'text' as const, text: LONG_SYSTEM, cache_control: { type: 'ephemeral' as const } }];

  it('anthropic: the second request with the same cached system prompt reads the cache', async () => {
    standin.script({ text: 'one' }, { text: 'two' });
    const first = await anthropic.messages.create({ ...ask('first question'), system: cachedSystem });
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1024);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    const stream = anthropic.messages.stream({ ...ask('second question'), system: cachedSystem });
    const second = await stream.finalMessage();
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBeLessThan(20);
    expect(standin.requests[1].usage).toMatchObject({ cacheRead: first.usage.cache_creation_input_tokens, cacheWrite: 0 });
  });

  it('anthropic: a moving breakpoint on the last message reads the earlier prefix and writes only the new part', async () => {
    const turn = (text: string, cached: boolean) => ({
      role: 'user' as const,
      content: [{ type: 'text' as const, text, ...(cached ? { cache_control: { type: 'ephemeral' as const } } : {}) }],
    });
    standin.script({ text: 'a1' }, { text: 'a2' });
    const first = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 64,
      system: LONG_SYSTEM,
      messages: [turn('question one', true)],
    });
    const second = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 64,
      system: LONG_SYSTEM,
      messages: [turn('question one', false), { role: 'assistant', content: 'a1' }, turn('question two', true)],
    });
    // everything up to the last block is cacheable; only the generation prompt after it is plain input
    const cacheable = (u: Anthropic.Usage) =>
      u.input_tokens - GENERATION_PROMPT_TOKENS + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    expect(second.usage.cache_read_input_tokens).toBe(cacheable(first.usage));
    expect(second.usage.cache_creation_input_tokens).toBe(cacheable(second.usage) - cacheable(first.usage));
    expect(second.usage.input_tokens).toBe(GENERATION_PROMPT_TOKENS);
  });

  it('anthropic: no cache_control means no cache reads or writes; short prefixes are not cached', async () => {
    standin.script({ text: '1' }, { text: '2' }, { text: '3' });
    await anthropic.messages.create({ ...ask('q'), system: LONG_SYSTEM });
    const plain = await anthropic.messages.create({ ...ask('q'), system: LONG_SYSTEM });
    expect(plain.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    const short = await anthropic.messages.create({
      ...ask('q'),
      system: [{ type: 'text', text: 'short', cache_control: { type: 'ephemeral' } }],
    });
    expect(short.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  });

  it('openai: the second request with the same long prefix reports cached_tokens', async () => {
    standin.script({ text: 'one' }, { text: 'two' });
    const system = { role: 'system' as const, content: LONG_SYSTEM };
    const first = await openai.chat.completions.create({ model: OPENAI_MODEL, messages: [system, { role: 'user', content: 'first' }] });
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const second = await openai.chat.completions.create({
      model: OPENAI_MODEL,
      messages: [system, { role: 'user', content: 'first' }, { role: 'assistant', content: 'one' }, { role: 'user', content: 'second' }],
    });
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBe(first.usage?.prompt_tokens);
    expect(second.usage!.prompt_tokens).toBeGreaterThan(second.usage!.prompt_tokens_details!.cached_tokens!);
    expect(standin.requests[1].usage).toMatchObject({ input: second.usage!.prompt_tokens, cacheRead: first.usage!.prompt_tokens });
  });
});

describe('routes and control', () => {
  it('control endpoints script, list and reset over HTTP', async () => {
    const scripted = await fetch(`${standin.url}/__standin/script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ text: 'from control' }, { toolCalls: [{ name: 'x' }] }]),
    });
    expect(await scripted.json()).toEqual({ pending: 2 });
    expect((await anthropic.messages.create(ask('hi'))).content[0]).toMatchObject({ text: 'from control' });
    const listed = (await (await fetch(`${standin.url}/__standin/requests`)).json()) as StandinRequest[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ protocol: 'anthropic', path: '/v1/messages', body: { model: MODEL } });
    const reset = await fetch(`${standin.url}/__standin/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(standin.pending()).toBe(0);
    expect(standin.requests).toHaveLength(0);
  });

  it('unknown paths get a 404 with a JSON error body', async () => {
    const response = await fetch(`${standin.url}/v1/nothing-here`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const openaiStyle = await fetch(`${standin.openaiUrl}/responses`, { method: 'POST', body: '{}' });
    expect(openaiStyle.status).toBe(404);
    expect(await openaiStyle.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(standin.requests).toHaveLength(0);
  });

  it('a dynamic responder answers before the queue and can fall through', async () => {
    standin.respond = (request) => (request.body.messages[0].content === 'dynamic' ? { text: 'from responder' } : undefined);
    standin.script({ text: 'from queue' });
    expect((await anthropic.messages.create(ask('dynamic'))).content[0]).toMatchObject({ text: 'from responder' });
    expect((await anthropic.messages.create(ask('static'))).content[0]).toMatchObject({ text: 'from queue' });
  });

  it('serves concurrent requests over reused keep-alive connections', async () => {
    standin.script(...Array.from({ length: 6 }, (_, i) => ({ text: `answer ${i}` })));
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => anthropic.messages.create(ask(`q${i}`))));
    expect(answers.map((a) => (a.content[0] as Anthropic.TextBlock).text).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `answer ${i}`),
    );
  });
});

describe('stand-in: what OpenAI models take, through the real openai SDK', () => {
  it('stand-in: a refusal streams as delta.refusal and the SDK assembles message.refusal with content null; non-streaming says the same', async () => {
    standin.script({ refusal: "I'm sorry, but I can't help with that." }, { refusal: 'No.' });
    const stream = openai.chat.completions.stream({ ...chat('a bad question'), model: 'gpt-4o' });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0].message).toMatchObject({ content: null, refusal: "I'm sorry, but I can't help with that." });
    expect(completion.choices[0].finish_reason).toBe('stop');
    const plain = await openai.chat.completions.create({ ...chat('again'), model: 'gpt-4o' });
    expect(plain.choices[0].message).toMatchObject({ content: null, refusal: 'No.' });
  });

  it('stand-in: reasoning tokens are inside completion_tokens and said in completion_tokens_details', async () => {
    standin.script({ text: 'ok', usage: { outputTokens: 5, reasoningTokens: 64 } });
    const completion = await openai.chat.completions.create({ ...chat('think'), model: 'o4-mini', reasoning_effort: 'low' });
    expect(completion.usage).toMatchObject({ completion_tokens: 69, completion_tokens_details: { reasoning_tokens: 64 } });
    expect(standin.requests[0].usage).toMatchObject({ output: 69, reasoning: 64 });
  });

  it('stand-in: a reasoning model refuses max_tokens, a model that does not reason refuses reasoning_effort, an unknown effort is invalid — as OpenAI answers, no turn consumed', async () => {
    standin.script({ text: 'kept' });
    const refused = async (body: Record<string, unknown>) => {
      const error = await openai.chat.completions.create({ ...chat('x'), ...body } as never).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return (error as InstanceType<typeof OpenAI.BadRequestError>).error as { param: string; code: string; message: string };
    };
    expect(await refused({ model: 'gpt-5', max_tokens: 10 })).toMatchObject({ param: 'max_tokens', code: 'unsupported_parameter' });
    expect(await refused({ model: 'o3-2025-04-16', max_tokens: 10 })).toMatchObject({ param: 'max_tokens' });
    expect(await refused({ model: 'gpt-4.1', reasoning_effort: 'low' })).toMatchObject({
      param: 'reasoning_effort',
      code: 'unsupported_parameter',
    });
    expect(await refused({ model: 'gpt-5', reasoning_effort: 'extreme' })).toMatchObject({ code: 'invalid_value' });
    expect(standin.pending()).toBe(1);
    // what a reasoning model does take, and a compatible server's model with max_tokens, are answered
    const fine = await openai.chat.completions.create({
      model: 'gpt-5-chat-latest',
      max_tokens: 10,
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: 'x' },
      ],
    });
    expect(fine.choices[0].message.content).toBe('kept');
  });
});

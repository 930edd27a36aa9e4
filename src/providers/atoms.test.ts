import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { startStandin, type Standin } from '#standin/standin.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainMessage, BrainToolDefinition } from '../core/contract/BrainMessage.js';
import {
  AbortedError,
  AuthFailedError,
  BadRequestError,
  ContextOverflowError,
  OutputInvalidError,
  SupplierRejectedError,
  SupplierUnavailableError,
} from '../core/contract/errors.js';
import { genBrainAtom } from './genBrainAtom.js';

const tools: BrainToolDefinition[] = [
  {
    name: 'read',
    description: 'read a file',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, limit: { type: 'integer' } },
      required: ['path'],
    },
  },
  {
    name: 'bash',
    description: 'run a command',
    inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

let standin: Standin;
beforeAll(async () => {
  standin = await startStandin({ cacheMinTokens: 0 });
});
afterAll(async () => standin.close());
beforeEach(() => standin.reset());

const contextFor = (overrides: Partial<BrainContext> = {}): BrainContext => ({
  creds: {
    anthropic: { apiKey: 'test', url: standin.url },
    qwen: { apiKey: 'test', url: standin.openaiUrl },
    openai: { apiKey: 'test', url: standin.openaiUrl },
  },
  retry: { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 50, maxTotalWaitMs: 5_000 },
  env: {},
  ...overrides,
});

/** .what = each atom and its wire protocol: every describe below runs once per atom */
const ATOMS = [
  { slug: 'claude/haiku', protocol: 'anthropic' as const, noKey: /set ANTHROPIC_API_KEY/ },
  { slug: 'qwen/qwen-plus', protocol: 'openai' as const, noKey: /set QWEN_API_KEY or DASHSCOPE_API_KEY/ },
  // the openai atom keeps every promise of the other two (a reasoning model: max_completion_tokens, developer role)
  { slug: 'openai/gpt-5', protocol: 'openai' as const, noKey: /set OPENAI_API_KEY \(library: pass context\.creds\.openai\.apiKey\)/ },
];

describe.each(ATOMS)('atom $slug over the $protocol protocol: text and tool calls', ({ slug, protocol }) => {
  const atom = genBrainAtom({ slug });

  it('answers with text through the real SDK over streaming HTTP', async () => {
    standin.script({ text: 'the answer is 42, said in several streamed pieces' });
    const deltas: string[] = [];
    const generation = await atom.generate(
      { messages: [{ role: 'user', content: 'what is the answer?' }], onTextDelta: (text) => deltas.push(text) },
      contextFor(),
    );
    expect(generation.message.content).toBe('the answer is 42, said in several streamed pieces');
    expect(generation.message.toolCalls).toEqual([]);
    expect(generation.stopReason).toBe('end');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(generation.message.content);
    // with caching on, a prompt's tokens may all be cache writes: what was sent is input + cache
    const { input, cache } = generation.tokens;
    expect(input + cache.get + cache.set).toBeGreaterThan(0);
    expect(generation.tokens.output).toBeGreaterThan(0);
    expect(generation.cash?.total).toBeGreaterThan(0);
    expect(standin.requests[0].protocol).toBe(protocol);
    expect(standin.requests[0].stream).toBe(true);
  });

  it('makes one and several tool calls in one turn, and round-trips their results in the native protocol', async () => {
    standin.script(
      {
        toolCalls: [
          { name: 'read', input: { path: 'a.txt' } },
          { name: 'bash', input: { command: 'ls -la' } },
        ],
        text: 'let me look',
      },
      { text: 'a.txt holds hello' },
    );
    const messages: BrainMessage[] = [{ role: 'user', content: 'what is in a.txt?' }];
    const first = await atom.generate({ messages, tools }, contextFor());
    expect(first.stopReason).toBe('tool_calls');
    expect(first.message.toolCalls.map((call) => [call.name, call.input])).toEqual([
      ['read', { path: 'a.txt' }],
      ['bash', { command: 'ls -la' }],
    ]);
    expect(first.message.toolCalls.every((call) => call.inputError === undefined && call.id)).toBe(true);
    const [readCall, bashCall] = first.message.toolCalls;
    const second = await atom.generate(
      {
        messages: [
          ...messages,
          first.message,
          { role: 'tool', toolCallId: readCall.id, toolName: 'read', content: '1\thello', isError: false },
          { role: 'tool', toolCallId: bashCall.id, toolName: 'bash', content: 'ls: denied', isError: true },
        ],
        tools,
      },
      contextFor(),
    );
    expect(second.message.content).toBe('a.txt holds hello');
    const body = standin.requests[1].body;
    if (protocol === 'anthropic') {
      expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual(['read', 'bash']);
      const assistant = body.messages[1];
      expect(assistant.role).toBe('assistant');
      expect(assistant.content.filter((block: { type: string }) => block.type === 'tool_use')).toHaveLength(2);
      const results = body.messages[2].content;
      expect(
        results.map((block: { type: string; tool_use_id: string; is_error: boolean }) => [block.type, block.tool_use_id, block.is_error]),
      ).toEqual([
        ['tool_result', readCall.id, false],
        ['tool_result', bashCall.id, true],
      ]);
    } else {
      expect(body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(['read', 'bash']);
      expect(body.messages[1].tool_calls.map((call: { id: string }) => call.id)).toEqual([readCall.id, bashCall.id]);
      expect(body.messages.slice(2).map((message: { role: string; tool_call_id: string }) => [message.role, message.tool_call_id])).toEqual(
        [
          ['tool', readCall.id],
          ['tool', bashCall.id],
        ],
      );
      expect(body.messages[3].content).toMatch(/^ERROR: ls: denied/);
      expect(body.stream_options).toEqual({ include_usage: true });
    }
  });
});

describe.each(ATOMS)('atom $slug over the $protocol protocol: failures and retries', ({ slug, noKey: noKeyError }) => {
  const atom = genBrainAtom({ slug });

  it('turns malformed tool arguments into a recoverable inputError instead of throwing; arguments it can read pass on as sent', async () => {
    standin.script({
      toolCalls: [
        { name: 'read', rawArguments: '{"path": "a.txt", ' },
        { name: 'read', input: { path: 42 } },
        { name: 'read', input: {} },
      ],
    });
    const generation = await atom.generate({ messages: [{ role: 'user', content: 'read' }], tools }, contextFor());
    const [badJson, badType, missing] = generation.message.toolCalls;
    expect(badJson.inputError).toMatch(/not valid JSON/);
    // whether readable arguments fit the tool's schema is checked once, where the session runs the call
    expect(badType).toMatchObject({ input: { path: 42 } });
    expect([badType.inputError, missing.inputError]).toEqual([undefined, undefined]);
  });

  it('retries 429 honouring retry-after, then 529/500, a connection reset and a cut stream, and succeeds', async () => {
    standin.script(
      { error: { status: 429, retryAfterMs: 300 } },
      { error: { status: 529 } },
      { reset: true },
      { cut: 'tool' },
      { text: 'finally' },
    );
    const started = Date.now();
    const generation = await atom.generate(
      { messages: [{ role: 'user', content: 'hi' }] },
      contextFor({ retry: { maxRetries: 5, baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 5_000 } }),
    );
    expect(generation.message.content).toBe('finally');
    expect(generation.attempts).toBe(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(standin.requests).toHaveLength(5);
  });

  it('tells the caller to discard text streamed by an attempt that is then retried', async () => {
    standin.script({ cut: 'text' }, { text: 'the whole answer' });
    let shown = '';
    const generation = await atom.generate(
      { messages: [{ role: 'user', content: 'hi' }], onTextDelta: (text) => (shown += text), onTextReset: () => (shown = '') },
      contextFor(),
    );
    expect(generation.message.content).toBe('the whole answer');
    expect(shown).toBe('the whole answer');
  });

  it('reports an abort by the caller as AbortedError, during a call and during a retry wait', async () => {
    standin.script({ delayMs: 5_000, then: { text: 'late' } });
    const during = new AbortController();
    setTimeout(() => during.abort(), 100);
    await expect(atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, contextFor({ signal: during.signal }))).rejects.toThrow(
      AbortedError,
    );

    standin.reset();
    standin.script({ error: { status: 529, retryAfterMs: 5_000 } }, { text: 'never' });
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 100);
    const started = Date.now();
    const error = await atom
      .generate({ messages: [{ role: 'user', content: 'hi' }] }, contextFor({ signal: waiting.signal }))
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(AbortedError);
    expect(error.message).toMatch(/the call was interrupted/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('bounds retries: exhausted attempts and a retry-after beyond the budget fail with SupplierUnavailableError', async () => {
    standin.script({ error: { status: 500 } }, { error: { status: 500 } }, { error: { status: 503 } });
    const exhausted = atom.generate(
      { messages: [{ role: 'user', content: 'hi' }] },
      contextFor({ retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5, maxTotalWaitMs: 1_000 } }),
    );
    await expect(exhausted).rejects.toThrow(SupplierUnavailableError);
    await expect(exhausted).rejects.toThrow(/failed 3 times in a row \(last: HTTP 503/);

    standin.reset();
    standin.script({ error: { status: 429, retryAfterSeconds: 120 } });
    const started = Date.now();
    const tooLong = atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, contextFor({ retry: { maxTotalWaitMs: 1_000 } }));
    await expect(tooLong).rejects.toThrow(/asked to retry after 120\.0 s, beyond the remaining retry budget/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('fails clearly on auth: no key names the env var, a rejected key is AuthFailedError', async () => {
    const noKey = atom.generate(
      { messages: [{ role: 'user', content: 'hi' }] },
      contextFor({
        creds: {
          anthropic: { url: standin.url },
          qwen: { url: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1' },
          openai: { url: 'https://api.openai.com/v1' },
        },
      }),
    );
    await expect(noKey).rejects.toThrow(AuthFailedError);
    await expect(noKey).rejects.toThrow(noKeyError);
    expect(standin.requests).toHaveLength(0);

    standin.script({ error: { status: 401, message: 'invalid x-api-key' } });
    await expect(atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, contextFor())).rejects.toThrow(AuthFailedError);
    expect(standin.requests).toHaveLength(1);
  });

  it('fails clearly on a bad request and on context overflow, without retry', async () => {
    standin.script({ error: { status: 400, message: 'messages: field required' } });
    await expect(atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, contextFor())).rejects.toThrow(SupplierRejectedError);
    standin.script({ contextOverflow: true });
    const overflow = atom.generate({ messages: [{ role: 'user', content: 'hi' }] }, contextFor());
    await expect(overflow).rejects.toThrow(ContextOverflowError);
    await expect(overflow).rejects.toThrow(/context window of \d+ tokens/);
    expect(standin.requests).toHaveLength(2);
  });
});

describe.each(ATOMS)('atom $slug over the $protocol protocol: ask, episodes and cache', ({ slug, protocol }) => {
  const atom = genBrainAtom({ slug });

  it('asks with a zod schema: valid output is typed; invalid output is retried once with the validation error', async () => {
    const schema = z.object({ verdict: z.enum(['pass', 'fail']), issues: z.array(z.string()) });
    standin.script({ text: '```json\n{"verdict":"pass","issues":[]}\n```' });
    const valid = await atom.ask({ say: 'review this', schema: { output: schema } }, contextFor());
    expect(valid.output).toEqual({ verdict: 'pass', issues: [] });
    expect(valid.episode.exchanges[0].output).toBe('{"verdict":"pass","issues":[]}');

    standin.reset();
    standin.script({ text: '{"verdict":"maybe"}' }, { text: '{"verdict":"fail","issues":["typo"]}' });
    const corrected = await atom.ask({ say: 'review this', schema: { output: schema } }, contextFor());
    expect(corrected.output).toEqual({ verdict: 'fail', issues: ['typo'] });
    expect(JSON.stringify(standin.requests[1].body.messages)).toMatch(/does not fit the required schema/);

    standin.reset();
    standin.script({ text: 'no json here' }, { text: 'still none' });
    await expect(atom.ask({ say: 'review this', schema: { output: schema } }, contextFor())).rejects.toThrow(OutputInvalidError);
  });

  it('asks on a prior episode: the prior exchanges are sent as plain turns and a NEW episode comes back', async () => {
    standin.script({ text: 'noted: reviewer' }, { text: 'looks fine' });
    const first = await atom.ask({ say: 'you are a reviewer' }, contextFor());
    const second = await atom.ask({ say: 'review: x = 1', on: { episode: first.episode } }, contextFor());
    expect(second.output).toBe('looks fine');
    expect(second.episode.exchanges.map((exchange) => exchange.input)).toEqual(['you are a reviewer', 'review: x = 1']);
    expect(first.episode.exchanges).toHaveLength(1);
    expect(second.series).toBeNull();
    expect(JSON.stringify(standin.requests[1].body.messages)).toContain('noted: reviewer');
    const { input, cache } = second.metrics.size.tokens;
    expect(input + cache.get + cache.set).toBeGreaterThan(0);
    expect(second.metrics.cost.time.milliseconds).toBeGreaterThanOrEqual(0);
    await expect(atom.ask({ say: 'x', on: { episode: { hash: 'x', exid: null, exchanges: [] } } }, contextFor())).rejects.toThrow(
      BadRequestError,
    );
  });

  it('reports cache tokens from the second call of a conversation on', async () => {
    const system = 'You are a careful engineer. '.repeat(400);
    standin.script({ text: 'one' }, { text: 'two' });
    const messages: BrainMessage[] = [{ role: 'user', content: 'first' }];
    const first = await atom.generate({ system, messages, tools }, contextFor());
    const second = await atom.generate(
      { system, messages: [...messages, first.message, { role: 'user', content: 'second' }], tools },
      contextFor(),
    );
    expect(first.tokens.cache.get).toBe(0);
    expect(second.tokens.cache.get).toBeGreaterThan(second.tokens.input);
    if (protocol === 'anthropic') expect(first.tokens.cache.set).toBeGreaterThan(0);
  });
});

describe('qwen <tool_call> text recovery', () => {
  const atom = genBrainAtom({ slug: 'qwen' });

  it('recovers hermes-style json and qwen3-coder xml tool calls returned as text', async () => {
    standin.script({
      text:
        'I will check.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>\n' +
        '<tool_call>\n<function=read>\n<parameter=path>\nb.txt\n</parameter>\n<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>',
    });
    const generation = await atom.generate({ messages: [{ role: 'user', content: 'read a and b' }], tools }, contextFor());
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.message.content).toBe('I will check.');
    expect(generation.message.toolCalls.map((call) => [call.name, call.input, call.inputError])).toEqual([
      ['read', { path: 'a.txt' }, undefined],
      ['read', { path: 'b.txt', limit: 5 }, undefined],
    ]);
    expect(new Set(generation.message.toolCalls.map((call) => call.id)).size).toBe(2);
  });
});

describe('genBrainAtom slugs', () => {
  it('maps claude, claude/<model>, qwen, qwen/<model> and lists the choices for an unknown slug', () => {
    expect(genBrainAtom({ slug: 'claude' }).slug).toBe('claude/sonnet');
    expect(genBrainAtom({ slug: 'claude/opus' }).spec.model).toMatch(/^claude-opus/);
    expect(genBrainAtom({ slug: 'qwen' }).slug).toBe('qwen/qwen3-coder-plus');
    expect(genBrainAtom({ slug: 'qwen/my-local-model' }).spec.price).toBeNull();
    expect(() => genBrainAtom({ slug: 'gpt' })).toThrow(/unknown atom 'gpt': choose one of claude, claude\/haiku/);
    expect(() => genBrainAtom({ slug: 'claude/sonnett' })).toThrow(BadRequestError);
  });
});

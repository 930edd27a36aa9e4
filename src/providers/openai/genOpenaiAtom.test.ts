// the openai atom against the stand-in, which answers as OpenAI's API does: a reasoning model refuses
// max_tokens, a model that does not reason refuses reasoning_effort, reasoning tokens come in completion_tokens_details
import { describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import type { BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { AuthFailedError, BadRequestError, SupplierRejectedError } from '../../core/contract/errors.js';
import { BRAIN_ATOM_SLUGS, genBrainAtom } from '../genBrainAtom.js';
import { OPENAI_MODELS } from '../models.js';
import { toReasoningEffort } from './genOpenaiAtom.js';

const { standin, contextFor } = useStandin();
const hi = { system: 'be brief', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('openai: what OpenAI models need on the wire', () => {
  it('openai: a reasoning model gets max_completion_tokens (never max_tokens), the system prompt as a developer message, and no reasoning_effort unless asked', async () => {
    standin().script({ text: 'hello' });
    const generation = await genBrainAtom({ slug: 'openai/gpt-5' }).generate({ ...hi, maxOutputTokens: 300 }, contextFor());
    expect(generation.message.content).toBe('hello');
    const body = standin().requests[0].body;
    // the answer's 300 and room to reason at the API's default effort (medium: 16,384), which OpenAI counts within the bound
    expect(body).toMatchObject({
      model: 'gpt-5',
      max_completion_tokens: 300 + 16_384,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('reasoning_effort');
    expect(body.messages[0]).toEqual({ role: 'developer', content: 'be brief' });
    expect(standin().requests[0].headers.authorization).toBe('Bearer test');
  });

  it('openai: the same request as max_tokens (a GPT model called through qwen/<model>, as before) is the 400 OpenAI answers', async () => {
    standin().script({ text: 'never sent' });
    const misnamed = genBrainAtom({ slug: 'qwen/gpt-5' }).generate(hi, contextFor());
    await expect(misnamed).rejects.toThrow(SupplierRejectedError);
    await expect(genBrainAtom({ slug: 'qwen/gpt-5' }).generate(hi, contextFor())).rejects.toThrow(
      /'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead/,
    );
  });

  it('openai: a model that does not reason (gpt-4.1) keeps the system role and gets max_completion_tokens', async () => {
    standin().script({ text: 'ok' });
    await genBrainAtom({ slug: 'openai/gpt-4.1' }).generate(hi, contextFor());
    const body = standin().requests[0].body;
    expect(body.messages[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(body.max_completion_tokens).toBe(8_192);
    expect(body).not.toHaveProperty('max_tokens');
  });

  it("openai: the bound has room for the reasoning a thinking budget gives (none when off), within the model's own most", async () => {
    const bounds: Array<[string, number | 'off', number, number]> = [
      ['gpt-5', 2_000, 1_000, 3_000],
      ['gpt-5', 'off', 1_000, 1_000],
      ['gpt-5', 100_000, 100_000, 128_000],
    ];
    for (const [model, thinking, maxOutputTokens, sent] of bounds) {
      standin().script({ text: 'ok' });
      const budget = thinking === 'off' ? 'off' : { budgetTokens: thinking };
      await genBrainAtom({ slug: `openai/${model}`, thinking: budget }).generate({ ...hi, maxOutputTokens }, contextFor());
      expect([model, thinking, standin().requests.at(-1)!.body.max_completion_tokens]).toEqual([model, thinking, sent]);
    }
  });

  it('openai: a thinking budget is sent as reasoning_effort (low up to 4096, medium up to 16384, high above); off is minimal on gpt-5 and none on gpt-5.1', async () => {
    const efforts: Array<[string, number | 'off', string]> = [
      ['gpt-5', 1, 'low'],
      ['gpt-5', 4_096, 'low'],
      ['gpt-5', 4_097, 'medium'],
      ['gpt-5', 16_384, 'medium'],
      ['gpt-5', 16_385, 'high'],
      ['gpt-5', 'off', 'minimal'],
      ['gpt-5-mini', 'off', 'minimal'],
      ['gpt-5.1', 'off', 'none'],
      ['o4-mini', 2_000, 'low'],
    ];
    for (const [model, budget, effort] of efforts) {
      standin().script({ text: 'ok' });
      await genBrainAtom({ slug: `openai/${model}` }).generate(
        { ...hi, thinking: budget === 'off' ? 'off' : { budgetTokens: budget } },
        contextFor(),
      );
      expect([model, budget, standin().requests.at(-1)!.body.reasoning_effort]).toEqual([model, budget, effort]);
    }
    // the atom's own thinking is the default of every call; a call's own wins
    standin().script({ text: 'ok' }, { text: 'ok' });
    const atom = genBrainAtom({ slug: 'openai/o3', thinking: { budgetTokens: 20_000 } });
    await atom.generate(hi, contextFor());
    await atom.generate({ ...hi, thinking: { budgetTokens: 100 } }, contextFor());
    expect(
      standin()
        .requests.slice(-2)
        .map((request) => request.body.reasoning_effort),
    ).toEqual(['high', 'low']);
  });

  it('openai: thinking a model cannot do fails before any request, naming the flag and what to give', async () => {
    // an o-series model always reasons
    expect(() => genBrainAtom({ slug: 'openai/o3', thinking: 'off' })).toThrow(BadRequestError);
    expect(() => genBrainAtom({ slug: 'openai/o3', thinking: 'off' })).toThrow(/--thinking off: o3 always reasons/);
    // a model that does not reason takes no budget; off is what it does anyway, so nothing is sent
    expect(() => genBrainAtom({ slug: 'openai/gpt-4.1', thinking: { budgetTokens: 2_000 } })).toThrow(
      /gpt-4.1 is not a reasoning model, so it takes no thinking budget/,
    );
    await expect(
      genBrainAtom({ slug: 'openai/gpt-4o' }).generate({ ...hi, thinking: { budgetTokens: 2_000 } }, contextFor()),
    ).rejects.toThrow(BadRequestError);
    // a budget that is not one is the shared check's error
    expect(() => genBrainAtom({ slug: 'openai/gpt-5', thinking: { budgetTokens: 0 } })).toThrow(/at least 1/);
    expect(standin().requests).toHaveLength(0);
    standin().script({ text: 'ok' });
    await genBrainAtom({ slug: 'openai/gpt-4o' }).generate({ ...hi, thinking: 'off' }, contextFor());
    expect(standin().requests[0].body).not.toHaveProperty('reasoning_effort');
    expect(toReasoningEffort({ model: 'o3-2025-04-16', thinking: { budgetTokens: 9_000 } })).toBe('medium');
  });

  it('openai: reasoning tokens (completion_tokens_details.reasoning_tokens) are counted inside output and said apart, and priced as output', async () => {
    standin().script({ text: 'forty-two', usage: { outputTokens: 10, reasoningTokens: 250 } });
    const generation = await genBrainAtom({ slug: 'openai/gpt-5-mini' }).generate(
      { ...hi, thinking: { budgetTokens: 8_000 } },
      contextFor(),
    );
    expect(standin().requests[0].usage).toMatchObject({ output: 260, reasoning: 250 });
    expect(generation.tokens.output).toBe(260);
    expect(generation.tokens.reasoning).toBe(250);
    const price = OPENAI_MODELS['gpt-5-mini'].price!;
    expect(generation.cash?.deets.output).toBeCloseTo((260 * price.output) / 1e6, 12);
    expect(generation.cash?.deets.input).toBeCloseTo((generation.tokens.input * price.input) / 1e6, 12);
  });

  it("openai: a refusal is stopReason refusal with the model's words, its calls never run", async () => {
    standin().script({ refusal: "I'm sorry, but I can't help with that." });
    const generation = await genBrainAtom({ slug: 'openai/gpt-4o' }).generate(hi, contextFor());
    expect(generation.stopReason).toBe('refusal');
    expect(generation.message.content).toBe("I'm sorry, but I can't help with that.");
    expect(generation.message.toolCalls).toEqual([]);
  });

  it('openai: tool calls in the native protocol, with strict schemas passed through', async () => {
    const tools: BrainToolDefinition[] = [
      {
        name: 'read',
        description: 'read a file',
        strict: true,
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
      },
    ];
    standin().script({ toolCalls: [{ id: 'call_1', name: 'read', input: { path: 'a.ts' } }] });
    const generation = await genBrainAtom({ slug: 'openai/gpt-5' }).generate({ ...hi, tools }, contextFor());
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.message.toolCalls).toEqual([{ id: 'call_1', name: 'read', input: { path: 'a.ts' } }]);
    expect(standin().requests[0].body.tools[0]).toMatchObject({ type: 'function', function: { name: 'read', strict: true } });
  });

  it('openai: a 429 with retry-after is waited out and retried, bounded', async () => {
    standin().script({ error: { status: 429, retryAfterMs: 30 } }, { text: 'after the wait' });
    const started = Date.now();
    const generation = await genBrainAtom({ slug: 'openai/gpt-5' }).generate(hi, contextFor());
    expect(generation.message.content).toBe('after the wait');
    expect(generation.attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});

describe('openai: slugs, prices and credentials', () => {
  it('openai: `openai` is gpt-5, `openai/<model>` any id; a known id is priced, an unknown (or dated) one is priced null', () => {
    expect(genBrainAtom({ slug: 'openai' }).slug).toBe('openai/gpt-5');
    expect(genBrainAtom({ slug: 'openai' }).spec).toMatchObject({ supplier: 'openai', model: 'gpt-5', price: { input: 1.25 } });
    expect(genBrainAtom({ slug: 'openai/gpt-4.1-mini' }).spec.price).toEqual({ input: 0.4, output: 1.6, cacheGet: 0.1, cacheSet: 0 });
    const dated = genBrainAtom({ slug: 'openai/o3-2025-04-16' });
    expect(dated.spec.price).toBeNull();
    expect(dated.description).toMatch(/price unknown \(cost null\)/);
    expect(genBrainAtom({ slug: 'openai', model: 'gpt-4o' }).slug).toBe('openai/gpt-4o');
    expect(BRAIN_ATOM_SLUGS).toEqual(expect.arrayContaining(['openai', 'openai/gpt-5', 'openai/<model>']));
    expect(() => genBrainAtom({ slug: 'openai/' })).toThrow(/unknown atom 'openai\/': did you mean 'openai'\?/);
    // every priced model has a cached-input price below its input price, and OpenAI bills no cache writes
    for (const [name, entry] of Object.entries(OPENAI_MODELS)) {
      expect([name, entry.price!.cacheGet < entry.price!.input, entry.price!.cacheSet]).toEqual([name, true, 0]);
    }
  });

  it("openai: the key comes from OPENAI_API_KEY or context.creds.openai, never from another supplier's key", async () => {
    const base = { retry: { maxRetries: 0 } };
    // a qwen or anthropic key does not authenticate openai
    const noKey = genBrainAtom({ slug: 'openai/gpt-5' }).generate(hi, {
      ...base,
      env: { QWEN_API_KEY: 'q', ANTHROPIC_API_KEY: 'a' },
      creds: { qwen: { apiKey: 'q' } },
    });
    await expect(noKey).rejects.toThrow(AuthFailedError);
    await expect(noKey).rejects.toThrow(/no API key for openai\/gpt-5 at https:\/\/api\.openai\.com\/v1: set OPENAI_API_KEY/);

    standin().script({ text: 'by env' }, { text: 'by creds' });
    const env = { OPENAI_API_KEY: 'from-env', OPENAI_BASE_URL: `${standin().openaiUrl}/chat/completions` };
    await genBrainAtom({ slug: 'openai/gpt-5' }).generate(hi, { ...base, env });
    await genBrainAtom({ slug: 'openai/gpt-5' }).generate(hi, {
      ...base,
      env,
      creds: { openai: { apiKey: 'from-creds', url: standin().openaiUrl } },
    });
    expect(standin().requests.map((request) => [request.path, request.headers.authorization])).toEqual([
      ['/v1/chat/completions', 'Bearer from-env'],
      ['/v1/chat/completions', 'Bearer from-creds'],
    ]);
    expect(() => genBrainAtom({ slug: 'openai/gpt-5', baseUrl: 'api.openai.com' })).toThrow(/is not an http\(s\) URL/);
  });
});

import { describe, expect, it } from 'vitest';

import { genRecordingLog, useStandin } from '#standin/useStandin.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import { AuthFailedError, BadRequestError, SupplierRejectedError } from '../core/contract/errors.js';
import { genBrainAtom } from './genBrainAtom.js';
import { CLAUDE_MODELS, QWEN_MODELS } from './models.js';

// the gateway-like stand-in refuses any request without this exact credential (x-api-key or Authorization: Bearer)
const GATEWAY_TOKEN = 'gw-token-0123456789abcdef';
const { standin } = useStandin({ cacheMinTokens: 0, apiKey: GATEWAY_TOKEN });

const fast = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 2_000 };
const hi = { messages: [{ role: 'user' as const, content: 'hi' }] };
/** a context whose only creds and endpoints are the env given (no context.creds, no process.env) */
const envContext = (env: Record<string, string>, extra: Partial<BrainContext> = {}): BrainContext => ({ env, retry: fast, ...extra });

describe('conventions: --model takes any supplier model id', () => {
  it('a known id or alias keeps its price and window, whatever the slug named', () => {
    const opus = genBrainAtom({ slug: 'claude', model: CLAUDE_MODELS.opus.model });
    expect(opus.slug).toBe('claude/opus');
    expect(opus.spec).toEqual(CLAUDE_MODELS.opus);
    expect(genBrainAtom({ slug: 'claude/haiku', model: 'sonnet' }).spec).toEqual(CLAUDE_MODELS.sonnet);
    expect(genBrainAtom({ slug: 'claude/claude-sonnet-4-6' }).slug).toBe('claude/sonnet');
    expect(genBrainAtom({ slug: 'qwen', model: 'qwen-plus' }).spec).toEqual(QWEN_MODELS['qwen-plus']);
  });

  it('an unknown id is sent as given, priced null with a default window, and the atom says so', async () => {
    const claude = genBrainAtom({ slug: 'claude', model: 'claude-opus-4-5-20251101', baseUrl: standin().url });
    expect(claude.slug).toBe('claude/claude-opus-4-5-20251101');
    expect(claude.spec).toMatchObject({ model: 'claude-opus-4-5-20251101', price: null, contextWindowTokens: 200_000 });
    expect(claude.description).toMatch(/outside bhrain's table: price unknown \(cost null\), window assumed 200000 tokens/);
    const qwen = genBrainAtom({ slug: 'qwen', model: 'qwen3-coder-next', baseUrl: standin().openaiUrl });
    expect(qwen.spec).toMatchObject({ model: 'qwen3-coder-next', price: null, contextWindowTokens: 32_768 });

    standin().script({ text: 'from the dated model' }, { text: 'from the new qwen' });
    const env = { ANTHROPIC_API_KEY: GATEWAY_TOKEN, QWEN_API_KEY: GATEWAY_TOKEN };
    const fromClaude = await claude.generate(hi, envContext(env));
    const fromQwen = await qwen.generate(hi, envContext(env));
    expect([fromClaude.message.content, fromQwen.message.content]).toEqual(['from the dated model', 'from the new qwen']);
    expect(standin().requests.map((request) => request.body.model)).toEqual(['claude-opus-4-5-20251101', 'qwen3-coder-next']);
    expect([fromClaude.cash, fromQwen.cash]).toEqual([null, null]);
    expect(fromClaude.tokens.output).toBeGreaterThan(0);
  });

  it('a claude slug takes any claude-<id>; a typo fails naming the nearest atom, and a slug near none lists the choices', () => {
    expect(genBrainAtom({ slug: 'claude/claude-3-5-haiku-20241022' }).spec.model).toBe('claude-3-5-haiku-20241022');
    for (const [slug, near] of [
      ['claude/sonnett', 'claude/sonnet'],
      ['claude/', 'claude'],
      ['qwen/', 'qwen'],
      ['gpt-5-mini', 'openai/gpt-5-mini'],
    ])
      expect(() => genBrainAtom({ slug })).toThrow(
        `unknown atom '${slug}': did you mean '${near}'? (an atom is claude, qwen, openai, or one`,
      );
    for (const slug of ['claude/claude-x/y', 'gpt'])
      expect(() => genBrainAtom({ slug })).toThrow(
        new RegExp(
          `^unknown atom '${slug}': choose one of claude, claude/haiku, .*claude/claude-<id>, qwen, .*qwen/<model>, openai, .*openai/<model>\\. For any other model id, pass the supplier's atom and --model <id>`,
        ),
      );
  });

  it('an empty or spaced --model fails before anything runs, naming the flag', () => {
    for (const model of ['', ' ', 'claude sonnet'])
      expect(() => genBrainAtom({ slug: 'claude', model })).toThrow(
        new RegExp(`^--model '${model}' is not a model id: give the supplier's id without spaces, e\\.g\\. claude-sonnet-4-6`),
      );
    expect(() => genBrainAtom({ slug: 'qwen', model: '' })).toThrow(BadRequestError);
  });
});

describe('conventions: ANTHROPIC_AUTH_TOKEN (bearer), as Claude Code does', () => {
  const atom = () => genBrainAtom({ slug: 'claude/haiku', baseUrl: standin().url });

  it('with only ANTHROPIC_AUTH_TOKEN set, the claude atom sends Authorization: Bearer and no x-api-key', async () => {
    standin().script({ text: 'through the gateway' });
    const generation = await atom().generate(hi, envContext({ ANTHROPIC_AUTH_TOKEN: GATEWAY_TOKEN }));
    expect(generation.message.content).toBe('through the gateway');
    expect(standin().requests[0].headers.authorization).toBe(`Bearer ${GATEWAY_TOKEN}`);
    expect(standin().requests[0].headers['x-api-key']).toBeUndefined();
  });

  it('with only ANTHROPIC_API_KEY set, the key is sent (@anthropic-ai/sdk 1.12 sends a key as a bearer too)', async () => {
    standin().script({ text: 'direct' });
    await atom().generate(hi, envContext({ ANTHROPIC_API_KEY: GATEWAY_TOKEN }));
    expect(standin().requests[0].headers.authorization).toBe(`Bearer ${GATEWAY_TOKEN}`);
  });

  it('with both set, ANTHROPIC_AUTH_TOKEN wins and a warning says so once', async () => {
    standin().script({ text: 'one' }, { text: 'two' });
    const { lines, log } = genRecordingLog();
    const both = atom();
    const context = envContext({ ANTHROPIC_AUTH_TOKEN: GATEWAY_TOKEN, ANTHROPIC_API_KEY: 'sk-ant-refused-by-the-gateway' }, { log });
    await both.generate(hi, context);
    await both.generate(hi, context);
    expect(standin().requests.map((request) => [request.headers.authorization, request.headers['x-api-key']])).toEqual([
      [`Bearer ${GATEWAY_TOKEN}`, undefined],
      [`Bearer ${GATEWAY_TOKEN}`, undefined],
    ]);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      'ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY are both set: claude/haiku authenticates with ANTHROPIC_AUTH_TOKEN (Authorization: Bearer), as Claude Code does. Unset one of them to silence this warning',
    ]);
  });

  it("a key passed in context.creds is the caller's explicit choice and beats an env token", async () => {
    standin().script({ text: 'explicit' });
    await atom().generate(
      hi,
      envContext({ ANTHROPIC_AUTH_TOKEN: 'ambient-token-not-this' }, { creds: { anthropic: { apiKey: GATEWAY_TOKEN } } }),
    );
    expect(standin().requests[0].headers.authorization).toBe(`Bearer ${GATEWAY_TOKEN}`);
  });

  it('a refused token and a missing one are errors that name the env vars to set', async () => {
    const refused = atom().generate(hi, envContext({ ANTHROPIC_AUTH_TOKEN: 'a-stale-token-000000' }));
    await expect(refused).rejects.toThrow(AuthFailedError);
    await expect(refused).rejects.toThrow(
      /^claude\/haiku rejected the credentials from ANTHROPIC_AUTH_TOKEN \(HTTP 401: .*\)\. Set ANTHROPIC_AUTH_TOKEN to a valid key$/,
    );

    const missing = genBrainAtom({ slug: 'claude' }).generate(hi, envContext({}));
    await expect(missing).rejects.toThrow(AuthFailedError);
    await expect(missing).rejects.toThrow(
      "no API key for claude/sonnet at https://api.anthropic.com: set ANTHROPIC_API_KEY, or ANTHROPIC_AUTH_TOKEN for a gateway's bearer token (library: pass context.creds.anthropic.apiKey)",
    );
    const qwenMissing = genBrainAtom({ slug: 'qwen' }).generate(hi, envContext({}));
    await expect(qwenMissing).rejects.toThrow(
      'no API key for qwen/qwen3-coder-plus at https://dashscope-intl.aliyuncs.com/compatible-mode/v1: set QWEN_API_KEY or DASHSCOPE_API_KEY (library: pass context.creds.qwen.apiKey)',
    );
  });
});

describe('conventions: a base URL that fixes the /v1 asymmetry, or says how on a 404', () => {
  const key = { ANTHROPIC_API_KEY: GATEWAY_TOKEN, QWEN_API_KEY: GATEWAY_TOKEN };

  it('claude takes its base URL with or without /v1, from baseUrl, context.creds or ANTHROPIC_BASE_URL', async () => {
    const forms = [standin().url, `${standin().url}/`, `${standin().url}/v1`, `${standin().url}/v1/`, `${standin().url}/v1/messages`];
    for (const form of forms) {
      standin().script({ text: 'ok' }, { text: 'ok' }, { text: 'ok' });
      await genBrainAtom({ slug: 'claude/haiku', baseUrl: form }).generate(hi, envContext(key));
      await genBrainAtom({ slug: 'claude/haiku' }).generate(hi, envContext(key, { creds: { anthropic: { url: form } } }));
      await genBrainAtom({ slug: 'claude/haiku' }).generate(hi, envContext({ ...key, ANTHROPIC_BASE_URL: form }));
    }
    expect(standin().requests).toHaveLength(forms.length * 3);
    expect(new Set(standin().requests.map((request) => request.path))).toEqual(new Set(['/v1/messages']));
  });

  it('qwen takes its base URL with /v1, and a pasted .../chat/completions', async () => {
    standin().script({ text: 'ok' }, { text: 'ok' });
    await genBrainAtom({ slug: 'qwen', baseUrl: standin().openaiUrl }).generate(hi, envContext(key));
    await genBrainAtom({ slug: 'qwen', baseUrl: `${standin().openaiUrl}/chat/completions` }).generate(hi, envContext(key));
    expect(standin().requests.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  });

  it("the atom's baseUrl (the CLI's --base-url) beats context.creds and the env var", async () => {
    standin().script({ text: 'reached' });
    const elsewhere = `${standin().url}/elsewhere`;
    const generation = await genBrainAtom({ slug: 'claude/haiku', baseUrl: standin().url }).generate(
      hi,
      envContext({ ...key, ANTHROPIC_BASE_URL: elsewhere }, { creds: { anthropic: { url: elsewhere } } }),
    );
    expect(generation.message.content).toBe('reached');
  });

  it('a qwen base URL without /v1 answers 404, and the error says an OpenAI-compatible base URL usually ends in /v1', async () => {
    const error = await genBrainAtom({ slug: 'qwen/my-model', baseUrl: standin().url })
      .generate(hi, envContext(key))
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(SupplierRejectedError);
    expect(error.message).toBe(
      `qwen/my-model: the endpoint ${standin().url}/chat/completions answered 404 (404 stand-in: no route for POST /chat/completions): an OpenAI-compatible base URL usually ends in /v1 (e.g. http://localhost:8000/v1). Set the base URL with --base-url or QWEN_BASE_URL`,
    );
  });

  it('a claude base URL at the wrong path answers 404 with the same hint shape for Anthropic', async () => {
    const error = await genBrainAtom({ slug: 'claude/haiku', baseUrl: `${standin().url}/anthropic` })
      .generate(hi, envContext(key))
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(SupplierRejectedError);
    expect(error.message).toMatch(
      new RegExp(
        `^claude/haiku: the endpoint ${standin().url}/anthropic/v1/messages answered 404 \\(.*\\): an Anthropic base URL is the part before /v1/messages, without /v1 \\(e\\.g\\. https://api\\.anthropic\\.com, .*\\)\\. Set the base URL with --base-url or ANTHROPIC_BASE_URL$`,
      ),
    );
  });

  it('a 404 that names the model says the endpoint does not serve it, pointing at --model', async () => {
    standin().script({ error: { status: 404, message: 'model: claude-nope-1' } });
    const error = await genBrainAtom({ slug: 'claude', model: 'claude-nope-1', baseUrl: standin().url })
      .generate(hi, envContext(key))
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(SupplierRejectedError);
    expect(error.message).toMatch(
      /^claude\/claude-nope-1: the endpoint .*\/v1\/messages does not serve the model 'claude-nope-1' \(HTTP 404: .*\)\. Check the model id given by --model or --atom$/,
    );
    expect(standin().requests).toHaveLength(1);
  });

  it('a base URL that is not an http(s) URL fails before any request, naming where it came from', async () => {
    for (const baseUrl of ['localhost:8000/v1', 'not a url', ''])
      expect(() => genBrainAtom({ slug: 'qwen', baseUrl })).toThrow(
        new RegExp(
          `^--base-url \\(genBrainAtom's baseUrl\\) '${baseUrl}' is not an http\\(s\\) URL: give the supplier's base URL, e\\.g\\. https://`,
        ),
      );
    const fromEnv = genBrainAtom({ slug: 'claude' }).generate(hi, envContext({ ...key, ANTHROPIC_BASE_URL: 'api.anthropic.com' }));
    await expect(fromEnv).rejects.toThrow(BadRequestError);
    await expect(fromEnv).rejects.toThrow(
      "ANTHROPIC_BASE_URL 'api.anthropic.com' is not an http(s) URL: give the supplier's base URL, e.g. https://api.anthropic.com",
    );
    expect(standin().requests).toHaveLength(0);
  });
});

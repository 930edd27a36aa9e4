import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { BadRequestError, OutputInvalidError } from '../core/contract/errors.js';
import { genRhachetBrainAtom } from './genRhachetBrainAtom.js';
import type { RhachetPlugToolDefinition, RhachetPlugToolExecution } from './RhachetBrain.js';

const { standin, contextFor } = useStandin();
const TEXT = { output: z.string() };
const brief = (content: string | null) => ({ get: async () => (content === null ? null : { content }) });

/** the system prompt a request carried, in either protocol */
const systemOf = (index: number): string => {
  const { body } = standin().requests[index];
  return body.system
    ? body.system.map((block: { text: string }) => block.text).join('')
    : (body.messages.find((message: { role: string }) => message.role === 'system')?.content ?? '');
};

/** a tool whose slug the suppliers would refuse as a name */
const lookup: RhachetPlugToolDefinition = {
  slug: 'stripe.customer.lookup',
  name: 'Customer Lookup',
  description: 'looks a customer up by email',
  schema: { input: z.object({ email: z.string() }), output: z.object({ id: z.string(), name: z.string() }) },
};

describe.each(PROTOCOL_SLUGS)('rhachet brains: the rhachet atom over $slug', ({ slug, protocol }) => {
  const atom = genRhachetBrainAtom({ atom: slug });

  it('rhachet brains: briefs reach the system prompt, joined by a blank line; a brief that is gone is left out', async () => {
    standin().script({ text: 'ok' });
    await atom.ask(
      { role: { briefs: [brief('# brief one\nbe terse'), brief(null), brief('# brief two\nsay ok')] }, prompt: 'hi', schema: TEXT },
      contextFor(),
    );
    expect(systemOf(0)).toBe('# brief one\nbe terse\n\n# brief two\nsay ok');
  });

  it('rhachet brains: a zod object schema.output is demanded and validated, with one corrective retry; z.string() gives the text', async () => {
    const schema = z.object({ risk: z.enum(['low', 'high']) });
    standin().script({ text: '{"risk":"medium"}' }, { text: '{"risk":"high"}' }, { text: 'just words' });
    const typed = await atom.ask({ role: {}, prompt: 'assess', schema: { output: schema } }, contextFor());
    expect(typed.output).toEqual({ risk: 'high' });
    expect(systemOf(0)).toContain('conforms to this JSON Schema');
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('does not fit the required schema');
    expect(typed.episode.exchanges[0].output).toBe('{"risk":"high"}');
    const text = await atom.ask({ role: {}, prompt: 'talk', schema: TEXT }, contextFor());
    expect(text.output).toBe('just words');
    expect(systemOf(2)).not.toContain('JSON Schema');
  });

  it('rhachet brains: an answer that never fits the schema is OutputInvalidError', async () => {
    standin().script({ text: 'nope' }, { text: 'still nope' });
    const error = await atom
      .ask({ role: {}, prompt: 'assess', schema: { output: z.object({ n: z.number() }) } }, contextFor())
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OutputInvalidError);
  });

  it('rhachet brains: plugged tools are offered natively under safe names; calls come back with the dotted slug, and executions continue to the answer', async () => {
    const schema = z.object({ name: z.string() });
    standin().script(
      { toolCalls: [{ name: 'stripe_customer_lookup', input: { email: 'alice@example.com' } }] },
      { text: '{"name":"Alice"}' },
    );
    const asked = await atom.ask(
      { role: {}, prompt: 'who is alice@example.com?', plugs: { tools: [lookup] }, schema: { output: schema } },
      contextFor(),
    );
    const offered = standin().requests[0].body.tools.map(
      (tool: { name?: string; function?: { name: string } }) => tool.name ?? tool.function?.name,
    );
    expect(offered).toEqual(['stripe_customer_lookup']);
    expect(asked.output).toBeNull();
    expect(asked.calls).toEqual({
      tools: [{ exid: expect.any(String), slug: 'stripe.customer.lookup', input: { email: 'alice@example.com' } }],
    });
    const exid = asked.calls!.tools[0].exid;
    // the exchange holds the call as rhachet-brains-anthropic writes it: tool_use blocks named by the slug
    expect(JSON.parse(asked.episode.exchanges[0].output)).toEqual([
      { type: 'tool_use', id: exid, name: 'stripe.customer.lookup', input: { email: 'alice@example.com' } },
    ]);

    const execution: RhachetPlugToolExecution = {
      exid,
      slug: 'stripe.customer.lookup',
      input: { email: 'alice@example.com' },
      signal: 'success',
      output: { id: 'cus_123', name: 'Alice' },
      metrics: { cost: { time: { milliseconds: 3 } } },
    };
    const answered = await atom.ask(
      { on: { episode: asked.episode }, role: {}, prompt: [execution], plugs: { tools: [lookup] }, schema: { output: schema } },
      contextFor(),
    );
    expect(answered).toMatchObject({ output: { name: 'Alice' }, calls: null });
    expect(JSON.parse(answered.episode.exchanges[1].input)).toEqual([
      { type: 'tool_result', tool_use_id: exid, content: '{"id":"cus_123","name":"Alice"}', is_error: false },
    ]);
    const messages = standin().requests[1].body.messages;
    if (protocol === 'anthropic') {
      expect(messages.slice(-2)).toMatchObject([
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: exid, name: 'stripe_customer_lookup', input: { email: 'alice@example.com' } }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: exid, content: '{"id":"cus_123","name":"Alice"}', is_error: false }],
        },
      ]);
    } else {
      expect(messages.slice(-2)).toMatchObject([
        { role: 'assistant', tool_calls: [{ id: exid, function: { name: 'stripe_customer_lookup' } }] },
        { role: 'tool', tool_call_id: exid, content: '{"id":"cus_123","name":"Alice"}' },
      ]);
    }
  });

  it('rhachet brains: a failed execution reaches the model as an error result', async () => {
    standin().script(
      { toolCalls: [{ id: 'call_9', name: 'stripe_customer_lookup', input: { email: 'bob@example.com' } }] },
      { text: 'no such customer' },
    );
    const asked = await atom.ask({ role: {}, prompt: 'who is bob?', plugs: { tools: [lookup] }, schema: TEXT }, contextFor());
    const failed: RhachetPlugToolExecution = {
      exid: asked.calls!.tools[0].exid,
      slug: 'stripe.customer.lookup',
      input: { email: 'bob@example.com' },
      signal: 'error:constraint',
      output: { error: new Error('customer not found') },
      metrics: { cost: { time: { milliseconds: 1 } } },
    };
    const answered = await atom.ask(
      { on: { episode: asked.episode }, role: {}, prompt: [failed], plugs: { tools: [lookup] }, schema: TEXT },
      contextFor(),
    );
    expect(answered.output).toBe('no such customer');
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('customer not found');
    expect(JSON.parse(answered.episode.exchanges[1].input)[0]).toMatchObject({
      is_error: true,
      content: '{"error":{"name":"Error","message":"customer not found"}}',
    });
  });

  it('rhachet brains: metrics cash are IsoPrice strings', async () => {
    standin().script({ text: 'ok' });
    const { metrics } = await atom.ask({ role: {}, prompt: 'hi', schema: TEXT }, contextFor());
    const { total, deets } = metrics.cost.cash;
    for (const price of [total, deets.input, deets.output, deets.cache.get, deets.cache.set]) expect(price).toMatch(/^USD \d+(\.\d+)?$/);
    expect(metrics.cost.time).toEqual({ milliseconds: expect.any(Number) });
  });
});

describe("rhachet brains: an episode's text is decoded only when it is all known content blocks", () => {
  it('rhachet brains: a JSON array of anything else stays text, in the input and in the output', async () => {
    const atom = genRhachetBrainAtom({ atom: 'claude/haiku' });
    standin().script({ text: 'seen' });
    const first = await atom.ask({ role: {}, prompt: '[{"type":"image","source":"x"}]', schema: TEXT }, contextFor());
    standin().reset();
    standin().script({ text: 'still text' });
    await atom.ask({ on: { episode: first.episode }, role: {}, prompt: '[1, 2]', schema: TEXT }, contextFor());
    expect(standin().requests[0].body.messages).toMatchObject([
      { role: 'user', content: [{ type: 'text', text: '[{"type":"image","source":"x"}]' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'seen' }] },
      { role: 'user', content: [{ type: 'text', text: '[1, 2]' }] },
    ]);
  });
});

describe("rhachet brains: creds from rhachet's context", () => {
  it("rhachet brains: context['brain.supplier.bhrain'].creds, an async getter, gives the key and url of each supplier", async () => {
    const supplies = {
      creds: async () => ({
        ANTHROPIC_API_KEY: 'sk-ant-from-getter',
        ANTHROPIC_BASE_URL: standin().url,
        DASHSCOPE_API_KEY: 'sk-qwen-from-getter',
        QWEN_BASE_URL: standin().openaiUrl,
      }),
    };
    standin().script({ text: 'claude here' }, { text: 'qwen here' });
    const context = { 'brain.supplier.bhrain': supplies, env: {} };
    expect((await genRhachetBrainAtom({ atom: 'claude/haiku' }).ask({ role: {}, prompt: 'hi', schema: TEXT }, context)).output).toBe(
      'claude here',
    );
    expect((await genRhachetBrainAtom({ atom: 'qwen/qwen-plus' }).ask({ role: {}, prompt: 'hi', schema: TEXT }, context)).output).toBe(
      'qwen here',
    );
    expect(standin().requests.map((request) => request.headers.authorization)).toEqual([
      'Bearer sk-ant-from-getter',
      'Bearer sk-qwen-from-getter',
    ]);
  });

  it('rhachet brains: a keyrack reference is refused before any request, saying to pass a getter', async () => {
    const context = { 'brain.supplier.bhrain': { creds: { keyrack: { owner: 'me', env: 'prod' } } } };
    const error = await genRhachetBrainAtom({ atom: 'claude/haiku' })
      .ask({ role: {}, prompt: 'hi', schema: TEXT }, context)
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toMatch(/keyrack reference .* needs rhachet's keyrack .* Pass an async getter instead/);
    expect(standin().requests).toHaveLength(0);
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { BadRequestError } from '../core/contract/errors.js';
import { genRhachetBrainRepl } from './genRhachetBrainRepl.js';
import type { RhachetPlugToolDefinition, RhachetPlugToolInvocation } from './RhachetBrain.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const TEXT = { output: z.string() };

/** the names of the tools a request offered, in either protocol */
const offered = (index: number): string[] =>
  standin().requests[index].body.tools.map((tool: { name?: string; function?: { name: string } }) => tool.name ?? tool.function?.name);

/** a plugged tool with execute, as rhachet's genBrainPlugToolDeclaration makes one, that records its invocations */
const genLookup = (slug: string, answer: unknown) => {
  const invocations: Array<{ invocation: RhachetPlugToolInvocation; context: unknown }> = [];
  const tool: RhachetPlugToolDefinition = {
    slug,
    name: 'Customer Lookup',
    description: 'looks a customer up by email',
    schema: { input: z.object({ email: z.string() }), output: z.object({ id: z.string() }) },
    execute: async ({ invocation }, context) => {
      invocations.push({ invocation, context });
      return { ...invocation, signal: 'success', output: answer, metrics: { cost: { time: { milliseconds: 1 } } } };
    },
  };
  return { tool, invocations };
};

describe.each(PROTOCOL_SLUGS)('rhachet brains: the rhachet repl over $slug', ({ slug }) => {
  it('rhachet brains: plugged tools run inside the loop through their execute, in ask and in act; their output reaches the model', async () => {
    const cwd = tempDir('bhrain-rhachet-plugs-');
    const repl = genRhachetBrainRepl({ atom: slug });
    const { tool, invocations } = genLookup('crm.customer.lookup', { id: 'cus_123' });
    const context = { ...contextFor({ cwd }), traceId: 'trace-1' };
    for (const mode of ['ask', 'act'] as const) {
      standin().reset();
      standin().script(
        { toolCalls: [{ name: 'crm_customer_lookup', input: { email: 'alice@example.com' } }] },
        { text: `found cus_123 in ${mode}` },
      );
      const result = await repl[mode]({ role: {}, prompt: 'find alice@example.com', plugs: { tools: [tool] }, schema: TEXT }, context);
      expect(result).toMatchObject({ output: `found cus_123 in ${mode}`, calls: null });
      expect(offered(0)).toContain('crm_customer_lookup');
      expect(offered(0)).toContain('read');
      expect(offered(0).includes('bash')).toBe(mode === 'act');
      expect(JSON.stringify(standin().requests[1].body.messages)).toContain('{\\"id\\":\\"cus_123\\"}');
      expect(result.series.episodes).toEqual([result.episode]);
    }
    expect(invocations.map(({ invocation }) => ({ slug: invocation.slug, input: invocation.input }))).toEqual([
      { slug: 'crm.customer.lookup', input: { email: 'alice@example.com' } },
      { slug: 'crm.customer.lookup', input: { email: 'alice@example.com' } },
    ]);
    expect(invocations[0].invocation.exid).toEqual(expect.any(String));
    // execute gets the caller's context, as rhachet passes it one
    expect(invocations.every(({ context: given }) => (given as { traceId?: string }).traceId === 'trace-1')).toBe(true);
  });

  it('rhachet brains: the tools of concurrent calls stay apart, and a later call without plugs offers none of them', async () => {
    const repl = genRhachetBrainRepl({ atom: slug });
    standin().respond = () => ({ text: 'ok' });
    await Promise.all([
      repl.ask({ role: {}, prompt: 'first', plugs: { tools: [genLookup('tool.a', {}).tool] }, schema: TEXT }, contextFor()),
      repl.ask({ role: {}, prompt: 'second', plugs: { tools: [genLookup('tool.b', {}).tool] }, schema: TEXT }, contextFor()),
    ]);
    await repl.ask({ role: {}, prompt: 'third', schema: TEXT }, contextFor());
    const byPrompt = Object.fromEntries(
      standin().requests.map((request, index) => [JSON.stringify(request.body.messages).match(/first|second|third/)![0], offered(index)]),
    );
    expect(byPrompt.first).toContain('tool_a');
    expect(byPrompt.first).not.toContain('tool_b');
    expect(byPrompt.second).toContain('tool_b');
    expect(byPrompt.second).not.toContain('tool_a');
    expect(byPrompt.third).toEqual(['read', 'glob', 'grep', 'websearch']);
  });

  it('rhachet brains: briefs join the system prompt; a zod object schema.output gives the validated value', async () => {
    standin().script({ text: '{"risk":"low"}' });
    const result = await genRhachetBrainRepl({ atom: slug }).ask(
      {
        role: { briefs: [{ get: async () => ({ content: '# reviewer brief\nrate the risk' }) }] },
        prompt: 'assess',
        schema: { output: z.object({ risk: z.enum(['low', 'high']) }) },
      },
      contextFor(),
    );
    expect(result.output).toEqual({ risk: 'low' });
    expect(JSON.stringify(standin().requests[0].body)).toContain('# reviewer brief\\nrate the risk');
    expect(JSON.stringify(standin().requests[0].body)).toContain('conforms to this JSON Schema');
  });
});

describe('rhachet brains: the rhachet repl refuses what it cannot take', () => {
  it('rhachet brains: tool executions as a prompt, a plugged tool without execute, and both episode and series, before any request', async () => {
    const repl = genRhachetBrainRepl({ atom: 'claude/haiku' });
    const { tool } = genLookup('crm.lookup', {});
    const attempts = [
      repl.ask({ role: {}, prompt: [] as never, schema: TEXT }, contextFor()),
      repl.act({ role: {}, prompt: 'x', plugs: { tools: [{ ...tool, execute: undefined }] }, schema: TEXT }, contextFor()),
      repl.ask(
        {
          on: { episode: { hash: 'a', exid: null, exchanges: [] }, series: { hash: 'b', exid: null, episodes: [] } } as never,
          role: {},
          prompt: 'x',
          schema: TEXT,
        },
        contextFor(),
      ),
    ];
    const errors = await Promise.all(attempts.map((attempt) => attempt.catch((caught) => caught)));
    for (const error of errors) expect(error).toBeInstanceOf(BadRequestError);
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/takes prompt as a string/),
      expect.stringMatching(/plugs.tools 'crm.lookup' has no execute/),
      expect.stringMatching(/on takes exactly one of episode or series/),
    ]);
    expect(standin().requests).toHaveLength(0);
  });
});

// `bhrain act --atom openai/<model>` end to end against the stand-in (which answers as OpenAI's API
// does), with the cost and the tokens in the JSON, and `bhrain config` saying where the key comes from
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { OPENAI_MODELS } from '../../src/providers/models.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-home-');
  cwd = tempDir('bhrain-openai-');
  await writeFile(join(cwd, 'a.ts'), 'export const a = 1;\n');
});
/** the stand-in's openai url under OPENAI_BASE_URL and an openai key; no qwen or anthropic key, so none can be used */
const envFor = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv(
    { standin: standin(), home },
    {
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_BASE_URL: undefined,
      QWEN_API_KEY: undefined,
      QWEN_BASE_URL: undefined,
      OPENAI_API_KEY: 'test-openai-key',
      OPENAI_BASE_URL: standin().openaiUrl,
      ...overrides,
    },
  );

describe('openai: bhrain act --atom openai/<model> end to end', () => {
  it('openai: bhrain act --atom openai/gpt-5-mini --thinking 8000 reads a file and answers; the JSON holds the tokens (reasoning apart) and the cost at the list price', async () => {
    standin().script(
      { toolCalls: [{ id: 'call_read1', name: 'read', input: { path: 'a.ts' } }], usage: { reasoningTokens: 120 } },
      { text: 'a.ts exports a = 1.', usage: { outputTokens: 8, reasoningTokens: 30 } },
    );
    const run = await runBhrain({
      args: ['act', '--atom', 'openai/gpt-5-mini', '--thinking', '8000', '--output', 'json', 'what does a.ts export?'],
      cwd,
      env: envFor(),
    });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ atom: 'openai/gpt-5-mini', output: 'a.ts exports a = 1.', termination: 'complete', exitCode: 0 });

    // what the wire carried: OpenAI's dialect for a reasoning model, with the openai key
    expect(standin().requests).toHaveLength(2);
    for (const request of standin().requests) {
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.headers.authorization).toBe('Bearer test-openai-key');
      expect(request.body).toMatchObject({ model: 'gpt-5-mini', reasoning_effort: 'medium', stream: true });
      expect(request.body.max_completion_tokens).toBeGreaterThan(0);
      expect(request.body).not.toHaveProperty('max_tokens');
      expect(request.body.messages[0].role).toBe('developer');
    }
    expect(standin().requests[1].body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_read1' });
    expect(standin().requests[1].body.messages.at(-1).content).toContain('export const a = 1;');

    // the tokens are the stand-in's usage, summed; reasoning is part of output and said apart
    const usage = standin().requests.map((request) => request.usage!);
    const input = usage.reduce((sum, each) => sum + each.input - each.cacheRead, 0);
    const cached = usage.reduce((sum, each) => sum + each.cacheRead, 0);
    const output = usage.reduce((sum, each) => sum + each.output, 0);
    expect(result.metrics.tokens).toEqual({ input, output, cache: { get: cached, set: 0 }, reasoning: 150 });
    expect(output).toBeGreaterThanOrEqual(150 + 8);
    const price = OPENAI_MODELS['gpt-5-mini'].price!;
    expect(result.metrics.cost.usd).toBeCloseTo((input * price.input + cached * price.cacheGet + output * price.output) / 1e6, 9);
    expect(result.metrics.cost.usd).toBeGreaterThan(0);

    // the run record says the same
    const meta = JSON.parse(await readFile(join(result.record, 'meta.json'), 'utf8'));
    expect(meta.atom).toBe('openai/gpt-5-mini');
  });

  it("openai: an unknown model runs priced null (a warning says so); a refusal is exit 9 with the model's words", async () => {
    standin().script({ text: 'fine' }, { refusal: "I'm sorry, but I can't help with that." });
    const unknown = await runBhrain({ args: ['ask', '--atom', 'openai/gpt-9-preview', '--output', 'json', 'hi'], cwd, env: envFor() });
    expect(unknown.code).toBe(0);
    const answered = JSON.parse(unknown.stdout);
    expect(answered.metrics.cost.usd).toBeNull();
    expect(answered.warnings.join('\n')).toMatch(/unknown model gpt-9-preview: its cost is reported as null/);
    const refused = await runBhrain({ args: ['ask', '--atom', 'openai', '--output', 'json', 'hi'], cwd, env: envFor() });
    expect(refused.code).toBe(9);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      atom: 'openai/gpt-5',
      termination: 'refusal',
      output: "I'm sorry, but I can't help with that.",
    });
  });

  it('openai: without OPENAI_API_KEY the run fails before any request, naming the variable (a qwen key is not used)', async () => {
    const run = await runBhrain({
      args: ['ask', '--atom', 'openai/gpt-5', 'hi'],
      cwd,
      env: envFor({ OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, QWEN_API_KEY: 'a-qwen-key' }),
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/no API key for openai\/gpt-5 at https:\/\/api\.openai\.com\/v1: set OPENAI_API_KEY/);
    expect(standin().requests).toHaveLength(0);
  });

  it('openai: --thinking a model cannot take is exit 2 before any request, naming the flag', async () => {
    const budget = await runBhrain({ args: ['ask', '--atom', 'openai/gpt-4.1', '--thinking', '2000', 'hi'], cwd, env: envFor() });
    expect(budget.code).toBe(2);
    expect(budget.stderr).toMatch(/--thinking 2000: gpt-4\.1 is not a reasoning model/);
    const off = await runBhrain({ args: ['ask', '--atom', 'openai/o3', '--thinking', 'off', 'hi'], cwd, env: envFor() });
    expect(off.code).toBe(2);
    expect(off.stderr).toMatch(/--thinking off: o3 always reasons/);
    expect(standin().requests).toHaveLength(0);
  });

  it('openai: bhrain config shows where the key and the endpoint come from (never the key itself), or which variable to set', async () => {
    const set = await runBhrain({ args: ['config', '--atom', 'openai/gpt-5'], cwd, env: envFor() });
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('key of openai: env:OPENAI_API_KEY (its value is not shown)');
    expect(set.stdout).toMatch(/baseUrl\s+http:\/\/127\.0\.0\.1:\d+\/v1\s+env:OPENAI_BASE_URL/);
    expect(set.stdout).not.toContain('test-openai-key');
    const json = await runBhrain({ args: ['config', '--atom', 'openai/gpt-5', '-o', 'json'], cwd, env: envFor() });
    expect(JSON.parse(json.stdout).key).toEqual({ supplier: 'openai', source: 'env:OPENAI_API_KEY', envVars: ['OPENAI_API_KEY'] });
    const unset = await runBhrain({ args: ['config', '--atom', 'openai'], cwd, env: envFor({ OPENAI_API_KEY: undefined }) });
    expect(unset.stdout).toContain('key of openai: none set (set OPENAI_API_KEY');
    // the key shown follows the atom's supplier
    const qwen = await runBhrain({ args: ['config', '--atom', 'qwen', '-o', 'json'], cwd, env: envFor({ DASHSCOPE_API_KEY: 'k' }) });
    expect(JSON.parse(qwen.stdout).key).toEqual({
      supplier: 'qwen',
      source: 'env:DASHSCOPE_API_KEY',
      envVars: ['QWEN_API_KEY', 'DASHSCOPE_API_KEY'],
    });
  });
});

import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { genRecordingLog, PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { genClaudeAtom } from '../../providers/anthropic/genClaudeAtom.js';
import { CLAUDE_MODELS } from '../../providers/models.js';
import { RECAP_PREFIX } from '../../core/contract/BrainSeries.js';
import { genBrainEpisode } from '../../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../../core/contract/BrainExchange.js';
import { BadRequestError, ContinuationNotSupportedError, EpisodeCompactedError, OutputInvalidError } from '../../core/contract/errors.js';
import { genBrainRepl } from './genBrainRepl.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const sent = (index: number) => JSON.stringify(standin().requests[index].body.messages);

describe.each(PROTOCOL_SLUGS)('BrainRepl on $slug: refs', ({ slug }) => {
  const replSlug = `bhrain.struct.v1@${slug}`;

  it('a fresh ask creates a new series with a new episode; both are frozen literals', async () => {
    standin().script({ text: 'hello there' });
    const result = await genBrainRepl({ slug: replSlug }).ask({ say: 'hi' }, contextFor());
    expect(result.output).toBe('hello there');
    expect(result.episode.exchanges).toEqual([expect.objectContaining({ input: 'hi', output: 'hello there' })]);
    expect(result.series.episodes).toEqual([result.episode]);
    expect(Object.isFrozen(result.episode) && Object.isFrozen(result.series)).toBe(true);
    expect(result.metrics.size.tokens.output).toBeGreaterThan(0);
  });

  it('ask on a series continues its current episode; NEW refs come back and the prior ones stay valid', async () => {
    const repl = genBrainRepl({ slug: replSlug });
    standin().script({ text: 'noted: the codename is heron' }, { text: 'the codename is heron' }, { text: 'branch sees only the first' });
    const first = await repl.ask({ say: 'remember the codename heron' }, contextFor());
    const second = await repl.ask({ say: 'what is the codename?', on: { series: first.series } }, contextFor());
    expect(sent(1)).toContain('remember the codename heron');
    expect(second.series.hash).not.toBe(first.series.hash);
    expect(second.episode.exchanges.map((exchange) => exchange.input)).toEqual(['remember the codename heron', 'what is the codename?']);
    expect(first.series.episodes[0].exchanges).toHaveLength(1);
    // the prior series ref still works, and sees context only as of that ref
    const branch = await repl.ask({ say: 'and then?', on: { series: first.series } }, contextFor());
    expect(sent(2)).not.toContain('what is the codename?');
    expect(branch.episode.exchanges).toHaveLength(2);
  });

  it('ask on an episode branches from it (a new series), even from a one-exchange episode', async () => {
    const repl = genBrainRepl({ slug: replSlug });
    standin().script({ text: 'first answer' }, { text: 'follow-up answer' });
    const first = await repl.ask({ say: 'first question' }, contextFor());
    const branched = await repl.ask({ say: 'follow-up', on: { episode: first.episode } }, contextFor());
    expect(sent(1)).toContain('first question');
    expect(sent(1)).toContain('first answer');
    expect(branched.series.episodes).toEqual([branched.episode]);
    expect(branched.series.hash).not.toBe(first.series.hash);
  });

  it('act on a series from a prior ask acts with awareness of it; act on an episode too', async () => {
    const cwd = tempDir('bhrain-repl-');
    const repl = genBrainRepl({ slug: replSlug });
    standin().script(
      { text: 'PLAN: write plan.txt containing "step 1"' },
      { toolCalls: [{ name: 'write', input: { path: 'plan.txt', content: 'step 1' } }] },
      { text: 'done' },
      { text: 'acted on the episode' },
    );
    const plan = await repl.ask({ say: 'plan it' }, contextFor({ cwd }));
    const acted = await repl.act({ do: 'now do it', on: { series: plan.series } }, contextFor({ cwd }));
    expect(sent(1)).toContain('PLAN: write plan.txt');
    expect(await readFile(join(cwd, 'plan.txt'), 'utf8')).toBe('step 1');
    expect(acted.series.hash).not.toBe(plan.series.hash);
    expect(acted.episode.exchanges.map((exchange) => exchange.output)).toEqual(['PLAN: write plan.txt containing "step 1"', 'done']);
    const onEpisode = await repl.act({ do: 'again', on: { episode: plan.episode } }, contextFor({ cwd }));
    expect(sent(3)).toContain('PLAN: write plan.txt');
    expect(onEpisode.output).toBe('acted on the episode');
  });

  it('ask offers read-only tools; act offers the full set', async () => {
    const repl = genBrainRepl({ slug: replSlug });
    standin().script({ text: 'a' }, { text: 'b' });
    await repl.ask({ say: 'x' }, contextFor());
    await repl.act({ do: 'y' }, contextFor());
    const names = (index: number) =>
      standin().requests[index].body.tools.map((tool: { name?: string; function?: { name: string } }) => tool.name ?? tool.function?.name);
    expect(names(0)).toEqual(['read', 'glob', 'grep', 'websearch']);
    expect(names(1)).toEqual(['read', 'write', 'edit', 'glob', 'grep', 'bash', 'websearch']);
  });

  it('ask with a zod schema returns validated, typed output and refs; an invalid answer is corrected once', async () => {
    const schema = z.object({ risk: z.enum(['low', 'high']), reasons: z.array(z.string()) });
    standin().script({ text: '{"risk":"medium"}' }, { text: '{"risk":"high","reasons":["touches auth"]}' });
    const result = await genBrainRepl({ slug: replSlug }).ask({ say: 'assess the change', schema: { output: schema } }, contextFor());
    expect(result.output).toEqual({ risk: 'high', reasons: ['touches auth'] });
    expect(JSON.stringify(standin().requests[0].body)).toContain('conforms to this JSON Schema');
    expect(sent(1)).toMatch(/does not fit the required schema/);
    expect(result.episode.exchanges[0].output).toBe('{"risk":"high","reasons":["touches auth"]}');
    expect(result.series.episodes).toHaveLength(1);
  });
});

describe.each(PROTOCOL_SLUGS)('BrainRepl on $slug: compaction and invalid refs', ({ slug }) => {
  const replSlug = `bhrain.struct.v1@${slug}`;

  it('a series that fills the window compacts into a recap episode; the compacted episode cannot be continued', async () => {
    const repl = genBrainRepl({ slug: replSlug, config: { limits: { contextTokens: 3_000 } } });
    standin().respond = (request) =>
      JSON.stringify(request.body).includes('You compact a conversation')
        ? { text: 'RECAP: the password is swordfish; the user wants a poem' }
        : undefined;
    standin().script({ text: 'x'.repeat(8_000) }, { text: 'the password is swordfish' });
    const first = await repl.ask({ say: 'remember the password swordfish and write a long poem' }, contextFor());
    const second = await repl.ask({ say: 'what is the password?', on: { series: first.series } }, contextFor());
    expect(second.output).toBe('the password is swordfish');
    expect(second.series.episodes).toHaveLength(2);
    expect(second.series.summaries).toEqual(['RECAP: the password is swordfish; the user wants a poem']);
    expect(second.episode.exchanges[0].input).toBe(`${RECAP_PREFIX}\nRECAP: the password is swordfish; the user wants a poem`);
    expect(second.series.episodes[0].hash).toBe(first.episode.hash);
    const last = JSON.stringify(standin().requests.at(-1)!.body.messages);
    expect(last).toContain('RECAP: the password is swordfish');
    expect(last).not.toContain('x'.repeat(100));

    const error = await repl.ask({ say: 'more', on: { episode: first.episode } }, contextFor()).catch((caught) => caught);
    expect(error).toBeInstanceOf(EpisodeCompactedError);
    expect(error.message).toMatch(/has been compacted.*Continue via \{ on: \{ series \} \} instead/);
    expect(error.ref.series).toBe(second.series);
    // closed for every repl, not only the one that compacted it
    await expect(genBrainRepl({ slug: replSlug }).ask({ say: 'more', on: { episode: first.episode } }, contextFor())).rejects.toThrow(
      EpisodeCompactedError,
    );
  });

  it('an episode larger than the window itself is summarized in parts, then continues', async () => {
    const big = genBrainEpisode({
      exchanges: Array.from({ length: 6 }, (_, index) =>
        genBrainExchange({ input: `chapter ${index} for ${slug}: ${'c'.repeat(60_000)}`, output: `read chapter ${index}` }),
      ),
    });
    let summaries = 0;
    standin().respond = (request) =>
      JSON.stringify(request.body).includes('You compact a conversation') ? { text: `SUMMARY ${++summaries}` } : undefined;
    standin().script({ text: 'continued after compaction' });
    const repl = genBrainRepl({
      slug: `bhrain.struct.v1@${slug.startsWith('claude') ? 'claude/haiku' : 'qwen/qwen-max'}`,
      config: { limits: { contextTokens: 20_000 } },
    });
    const result = await repl.ask({ say: 'what happened?', on: { episode: big } }, contextFor());
    expect(result.output).toBe('continued after compaction');
    expect(summaries).toBeGreaterThan(1);
    expect(result.series.episodes[0].hash).toBe(big.hash);
    expect(result.series.summaries).toEqual([`SUMMARY ${summaries}`]);
  });

  it('invalid or forged refs and both refs at once fail clearly and create nothing', async () => {
    const repl = genBrainRepl({ slug: replSlug });
    const forged = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'a', output: 'b' })] });
    await expect(repl.ask({ say: 'x', on: { series: { ...forged, episodes: [], summaries: [] } as never } }, contextFor())).rejects.toThrow(
      /series not found or invalid.*Start a new series/,
    );
    await expect(repl.ask({ say: 'x', on: { episode: { ...forged, hash: 'f'.repeat(64) } } }, contextFor())).rejects.toThrow(
      /episode not found or invalid.*Start a new episode/,
    );
    await expect(repl.ask({ say: 'x', on: { episode: forged, series: {} } as never }, contextFor())).rejects.toThrow(BadRequestError);
    expect(standin().requests).toHaveLength(0);
  });

  it('refs are emitted to context.log on every call', async () => {
    const { lines, log } = genRecordingLog();
    standin().script({ text: 'one' }, { text: 'two' });
    const repl = genBrainRepl({ slug: replSlug });
    const first = await repl.ask({ say: 'a' }, contextFor({ log }));
    const second = await repl.act({ do: 'b', on: { series: first.series } }, contextFor({ log }));
    const refs = lines.filter((line) => line.meta?.episode && line.meta?.series).map((line) => [line.meta!.episode, line.meta!.series]);
    expect(refs).toEqual([
      [first.episode.hash, first.series.hash],
      [second.episode.hash, second.series.hash],
    ]);
  });
});

describe('crosssupplier: refs move between suppliers as plaintext', () => {
  it('crosssupplier.1 / crosssupplier.2: an episode and a series from claude continue on qwen', async () => {
    standin().script({ text: 'noted: deploy on fridays is forbidden' }, { text: 'no friday deploys' }, { text: 'still no friday deploys' });
    const claude = genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' });
    const qwen = genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-plus' });
    const made = await claude.ask({ say: 'rule: never deploy on fridays' }, contextFor());
    const onEpisode = await qwen.ask({ say: 'can I deploy friday?', on: { episode: made.episode } }, contextFor());
    const onSeries = await qwen.ask({ say: 'and this friday?', on: { series: made.series } }, contextFor());
    for (const index of [1, 2]) {
      expect(standin().requests[index].protocol).toBe('openai');
      expect(sent(index)).toContain('rule: never deploy on fridays');
      expect(sent(index)).toContain('noted: deploy on fridays is forbidden');
    }
    expect(onEpisode.episode.exchanges).toHaveLength(2);
    expect(onSeries.series.hash).not.toBe(made.series.hash);
  });
});

describe('a supplier without continuation support', () => {
  const atom = genClaudeAtom({ slug: 'claude/haiku', entry: { ...CLAUDE_MODELS.haiku, continuation: false } });

  it('fails fast on `on`, carrying the prior ref; a fresh call still works and returns refs', async () => {
    standin().script({ text: 'fresh works' });
    const repl = genBrainRepl({ atom });
    const fresh = await repl.ask({ say: 'hi' }, contextFor());
    expect(fresh.episode.exchanges).toHaveLength(1);
    const error = await repl.ask({ say: 'again', on: { series: fresh.series } }, contextFor()).catch((caught) => caught);
    expect(error).toBeInstanceOf(ContinuationNotSupportedError);
    expect(error.message).toMatch(/does not support continuation/);
    expect(error.ref.series).toBe(fresh.series);
    expect(standin().requests).toHaveLength(1);
  });
});

describe('memory efficiency', () => {
  it('the repl keeps only its latest refs: heap stays flat over 1,000 calls whose refs the caller ignores', async () => {
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    const repl = genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-plus' });
    standin().respond = () => ({ text: 'ok '.repeat(200) });
    const call = () => repl.ask({ say: `question ${'q'.repeat(2_000)}` }, contextFor());
    for (let index = 0; index < 100; index++) await call(); // warm up
    standin().requests.length = 0;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let index = 0; index < 1_000; index++) {
      await call();
      if (index % 100 === 0) standin().requests.length = 0; // the stand-in's own record is not the repl's memory
    }
    standin().requests.length = 0;
    gc();
    const growthMb = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
    expect(growthMb).toBeLessThan(5);
  }, 120_000);
});

describe.each(PROTOCOL_SLUGS)('json-schema on $slug', ({ slug }) => {
  const replSlug = `bhrain.struct.v1@${slug}`;
  const jsonSchema = {
    type: 'object',
    properties: { risk: { enum: ['low', 'high'] }, reasons: { type: 'array', items: { type: 'string' } } },
    required: ['risk', 'reasons'],
    additionalProperties: false,
  };

  it('json-schema: a plain JSON Schema is validated by ajv; a mismatch is retried once with the validation errors, then the validated value is the output', async () => {
    standin().script({ text: '{"risk":"medium","extra":1}' }, { text: '```json\n{"risk":"high","reasons":["touches auth"]}\n```' });
    const result = await genBrainRepl({ slug: replSlug }).act({ do: 'assess the change', schema: { jsonSchema } }, contextFor());
    expect(result.output).toEqual({ risk: 'high', reasons: ['touches auth'] });
    expect(result.session.termination).toBe('complete');
    expect(result.session.error).toBeNull();
    // the model saw the schema, then exactly what was wrong with its answer
    expect(JSON.stringify(standin().requests[0].body)).toContain(
      `conforms to this JSON Schema: no prose, no code fences.\\n${JSON.stringify(JSON.stringify(jsonSchema)).slice(1, -1)}`,
    );
    expect(sent(1)).toContain(
      'Your answer does not fit the required schema: (root) must have required property \'reasons\'; (root) must NOT have additional properties: \'extra\'; /risk must be equal to one of the allowed values: \\"low\\", \\"high\\"',
    );
    expect(standin().requests).toHaveLength(2);
    // one call, two sessions: the result counts both
    expect(result.session.iterations).toBe(2);
    expect(result.metrics.size.tokens.input).toBe(
      standin().requests.reduce(
        (sum, request) => sum + (request.usage!.input - (request.protocol === 'openai' ? request.usage!.cacheRead : 0)),
        0,
      ),
    );
    expect(result.episode.exchanges[0].output).toBe('{"risk":"high","reasons":["touches auth"]}');
  });

  it('json-schema: after a second mismatch the result carries an OutputInvalidError with the raw answer and the errors; the refs are still returned', async () => {
    standin().script({ text: 'low risk, I think' }, { text: '{"risk":"low"}' });
    const result = await genBrainRepl({ slug: replSlug }).ask({ say: 'assess', schema: { jsonSchema } }, contextFor());
    expect(standin().requests).toHaveLength(2);
    expect(result.session.termination).toBe('error');
    expect(result.session.error).toBeInstanceOf(OutputInvalidError);
    expect(result.session.error?.message).toBe(
      `${replSlug} did not return output that fits the schema, after one corrective turn: (root) must have required property 'reasons'`,
    );
    expect((result.session.error as OutputInvalidError).output).toBe('{"risk":"low"}');
    expect(result.output).toBe('{"risk":"low"}');
    expect(result.episode.exchanges[0].output).toMatch(
      /^\{"risk":"low"\}\n\n\[bhrain: this exchange ended with an error: .*must have required property 'reasons'\]$/,
    );
    expect(result.series.episodes).toEqual([result.episode]);
  });

  it('json-schema: a zod schema still types and validates as before, through the same path', async () => {
    standin().script({ text: '{"n":"one"}' }, { text: '{"n":1}' });
    const result = await genBrainRepl({ slug: replSlug }).ask(
      { say: 'a number', schema: { output: z.object({ n: z.number() }) } },
      contextFor(),
    );
    expect(result.output.n + 1).toBe(2);
    expect(sent(1)).toMatch(/does not fit the required schema: \/n Invalid input: expected number, received string/);
  });
});

describe('json-schema: schemas that cannot be used', () => {
  const repl = () => genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' });
  const ask = (jsonSchema: unknown) => repl().ask({ say: 'x', schema: { jsonSchema: jsonSchema as object } }, contextFor());

  it('json-schema: a schema ajv rejects is a BadRequestError naming the problem, before any request', async () => {
    await expect(ask({ type: 'object', properties: { a: { type: 'strin' } } })).rejects.toThrow(BadRequestError);
    await expect(ask({ type: 'object', properties: { a: { type: 'strin' } } })).rejects.toThrow(
      /^the output schema \(--json-schema; schema\.jsonSchema in the library\) is not a valid JSON Schema: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/,
    );
    // a typo is not a constraint silently dropped
    await expect(ask({ type: 'object', requird: ['a'] })).rejects.toThrow(
      /is not a valid JSON Schema: strict mode: unknown keyword: "requird"\. Fix the schema and run again/,
    );
    await expect(ask({ $ref: '#/$defs/missing' })).rejects.toThrow(
      /is not a valid JSON Schema: can't resolve reference #\/\$defs\/missing/,
    );
    await expect(ask({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })).rejects.toThrow(
      /declares \$schema "http:\/\/json-schema\.org\/draft-04\/schema#", a draft bhrain does not read: use https:\/\/json-schema\.org\/draft\/2020-12\/schema, https:\/\/json-schema\.org\/draft\/2019-09\/schema, http:\/\/json-schema\.org\/draft-07\/schema/,
    );
    await expect(ask(['not', 'a', 'schema'])).rejects.toThrow(/must be a JSON object, got an array/);
    // a zod schema converts itself (zod 4.1+), since zod is not loaded for it: one too old to is named as such
    const tooOld = { safeParse: () => ({ success: true, data: null }) } as unknown as z.ZodType<null>;
    await expect(repl().ask({ say: 'x', schema: { output: tooOld } }, contextFor())).rejects.toThrow(
      /^the output schema \(--json-schema; schema\.jsonSchema in the library\) is a zod schema without toJSONSchema\(\): use zod 4\.1 or newer, or give \{ jsonSchema: <a JSON Schema object> \}$/,
    );
    expect(standin().requests).toHaveLength(0);
  });

  it('json-schema: draft-07 and 2020-12 schemas both work, chosen by $schema', async () => {
    standin().script({ text: '["a", 1]' }, { text: '["a", 1]' });
    const draft7 = await ask({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'string' }, { type: 'number' }],
    });
    const draft2020 = await ask({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'number' }],
    });
    expect([draft7.output, draft2020.output]).toEqual([
      ['a', 1],
      ['a', 1],
    ]);
  });
});

describe('budgets: a repl call is one budget', () => {
  it('budgets: the corrective turn of a schema counts toward the same budget: with it spent, no second request is sent', async () => {
    standin().script({ text: '{"risk":"medium"}' }, { text: '{"risk":"high"}' });
    const repl = genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku', config: { limits: { maxTokens: 100 } } });
    const result = await repl.ask(
      { say: 'assess', schema: { jsonSchema: { type: 'object', properties: { risk: { enum: ['low', 'high'] } } } } },
      contextFor(),
    );
    expect(standin().requests).toHaveLength(1);
    expect(result.session.termination).toBe('budget');
    expect(result.session.budgetReached).toMatchObject({ limit: 'maxTokens', cap: 100 });
    expect(result.session.output).toMatch(
      /^\{"risk":"medium"\}\n\n\[bhrain stopped before the task was complete: the token budget was reached/,
    );
  });
});

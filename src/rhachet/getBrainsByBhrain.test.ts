import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { useStandin } from '#standin/useStandin.js';
import { CLAUDE_MODELS, OPENAI_MODELS, QWEN_MODELS } from '../providers/models.js';
import * as pkg from '../index.js';
import { getBrainAtomsByBhrain, getBrainReplsByBhrain } from './getBrainsByBhrain.js';
import type { RhachetBrainOutputMetrics } from './RhachetBrain.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const ISO_PRICE = /^USD \d+(\.\d+)?$/;
const TEXT = { output: z.string() };

/** every cash value of a call's metrics */
const cashOf = (metrics: RhachetBrainOutputMetrics) => {
  const { total, deets } = metrics.cost.cash;
  return [total, deets.input, deets.output, deets.cache.get, deets.cache.set];
};

/** the model each exported atom names, and the protocol it speaks */
const EXPECTED = [
  ...Object.entries(CLAUDE_MODELS).map(([name, entry]) => ({ atom: `claude/${name}`, model: entry.model, protocol: 'anthropic' })),
  ...Object.entries(QWEN_MODELS).map(([name, entry]) => ({ atom: `qwen/${name}`, model: entry.model, protocol: 'openai' })),
  // the openai atoms too
  ...Object.entries(OPENAI_MODELS).map(([name, entry]) => ({ atom: `openai/${name}`, model: entry.model, protocol: 'openai' })),
];

describe('rhachet brains: discovery', () => {
  it('rhachet brains: every getBrainAtomsBy*/getBrainReplsBy* export is a zero-argument function returning an array, as rhachet collects them', () => {
    const collectors = Object.entries(pkg).filter(([name]) => /^getBrain(Atoms|Repls)By/.test(name));
    expect(collectors.map(([name]) => name).sort()).toEqual(['getBrainAtomsByBhrain', 'getBrainReplsByBhrain']);
    for (const [, collect] of collectors) {
      expect(typeof collect).toBe('function');
      expect((collect as () => unknown).length).toBe(0);
      expect(Array.isArray((collect as () => unknown)())).toBe(true);
    }
  });

  it('rhachet brains: atoms and repls are repo-prefixed and unique; atoms have ask and no act, repls both', () => {
    const atoms = getBrainAtomsByBhrain();
    const repls = getBrainReplsByBhrain();
    expect(atoms.map((atom) => atom.slug)).toEqual(EXPECTED.map(({ atom }) => `bhrain/${atom}`));
    expect(repls.map((repl) => repl.slug)).toEqual(EXPECTED.map(({ atom }) => `bhrain/bhrain.struct.v1@${atom}`));
    for (const brain of [...atoms, ...repls]) {
      expect(brain.repo).toBe('bhrain');
      expect(brain.slug.startsWith('bhrain/')).toBe(true);
      expect(typeof brain.description).toBe('string');
      expect(brain.description.length).toBeGreaterThan(0);
      expect(typeof brain.ask).toBe('function');
    }
    for (const atom of atoms) expect('act' in atom).toBe(false);
    for (const repl of repls) expect(typeof repl.act).toBe('function');
    const keys = [...atoms, ...repls].map((brain) => `${brain.repo}:${brain.slug}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("rhachet brains: each spec is rhachet's BrainSpec: cash per token as IsoPrice, time as durations, window, cutoff, domain, skills", () => {
    for (const brain of [...getBrainAtomsByBhrain(), ...getBrainReplsByBhrain()]) {
      const { cost, gain } = brain.spec;
      expect(cost.cash.per).toBe('token');
      for (const price of [cost.cash.input, cost.cash.output, cost.cash.cache.get, cost.cash.cache.set]) expect(price).toMatch(ISO_PRICE);
      expect(cost.time.speed).toEqual({ tokens: expect.any(Number), per: { seconds: 1 } });
      expect(cost.time.latency).toEqual({ milliseconds: expect.any(Number) });
      expect(gain.size.context.tokens).toBeGreaterThan(0);
      expect(gain.cutoff).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(['ALL', 'SOFTWARE']).toContain(gain.domain);
      expect(gain.skills).toEqual({ tooluse: true });
      expect(gain.grades).toEqual({});
    }
    const sonnet = getBrainAtomsByBhrain().find((atom) => atom.slug === 'bhrain/claude/sonnet')!;
    expect(sonnet.spec.cost.cash).toEqual({
      per: 'token',
      input: 'USD 0.000003',
      output: 'USD 0.000015',
      cache: { get: 'USD 0.0000003', set: 'USD 0.00000375' },
    });
    const turbo = getBrainAtomsByBhrain().find((atom) => atom.slug === 'bhrain/qwen/qwen-turbo')!;
    expect(turbo.spec.cost.cash.input).toBe('USD 0.00000005');
  });
});

describe('rhachet brains: a rhachet-shaped call on each exported brain, against the stand-in', () => {
  it('rhachet brains: ask on each exported atom reaches its model over its protocol and answers, with IsoPrice cash', async () => {
    for (const [index, atom] of getBrainAtomsByBhrain().entries()) {
      standin().script({ text: `pong from ${EXPECTED[index].atom}` });
      const result = await atom.ask({ role: {}, prompt: 'ping', schema: TEXT }, contextFor());
      const request = standin().requests[index];
      expect({ slug: atom.slug, protocol: request.protocol, model: request.body.model }).toEqual({
        slug: atom.slug,
        protocol: EXPECTED[index].protocol,
        model: EXPECTED[index].model,
      });
      expect(result).toMatchObject({ output: `pong from ${EXPECTED[index].atom}`, calls: null, series: null });
      expect(result.episode.exchanges.map((exchange) => [exchange.input, exchange.output])).toEqual([
        ['ping', `pong from ${EXPECTED[index].atom}`],
      ]);
      for (const price of cashOf(result.metrics)) expect(price).toMatch(ISO_PRICE);
      expect(result.metrics.cost.cash.total).not.toBe('USD 0');
      expect(result.metrics.size.tokens.output).toBeGreaterThan(0);
    }
  });

  it('rhachet brains: ask and act on each exported repl reach its model and answer, with a new episode and series', async () => {
    const cwd = tempDir('bhrain-rhachet-repl-');
    for (const [index, repl] of getBrainReplsByBhrain().entries()) {
      standin().reset();
      standin().script({ text: 'asked' }, { text: 'acted' });
      const asked = await repl.ask({ role: {}, prompt: 'look', schema: TEXT }, contextFor({ cwd }));
      const acted = await repl.act({ on: { series: asked.series }, role: {}, prompt: 'do', schema: TEXT }, contextFor({ cwd }));
      expect(standin().requests.map((request) => [request.protocol, request.body.model])).toEqual([
        [EXPECTED[index].protocol, EXPECTED[index].model],
        [EXPECTED[index].protocol, EXPECTED[index].model],
      ]);
      expect([asked.output, acted.output, asked.calls, acted.calls]).toEqual(['asked', 'acted', null, null]);
      expect(acted.series.episodes).toEqual([acted.episode]);
      expect(acted.episode.exchanges.map((exchange) => exchange.output)).toEqual(['asked', 'acted']);
      expect(acted.series.hash).not.toBe(asked.series.hash);
      for (const price of cashOf(acted.metrics)) expect(price).toMatch(ISO_PRICE);
    }
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { genRecordingLog, useStandin } from '#standin/useStandin.js';
import { genBrainAtom } from '../providers/genBrainAtom.js';
import { RECAP_PREFIX } from '../core/contract/BrainSeries.js';
import { BadRequestError } from '../core/contract/errors.js';
import { parseBrainEpisode, parseBrainRef, parseBrainSeries } from '../core/contract/parseBrainRef.js';
import { genBrainRepl } from '../agent/repl/genBrainRepl.js';
import { asBhrainEpisode, asBhrainSeries } from './readRhachetCall.js';
import { asRhachetEpisode, asRhachetSeries } from './asRhachetOutput.js';
import { genRhachetBrainAtom } from './genRhachetBrainAtom.js';
import { genRhachetBrainRepl } from './genRhachetBrainRepl.js';

const { standin, contextFor } = useStandin();
const sent = (index: number) => JSON.stringify(standin().requests[index].body.messages);
const TEXT = { output: z.string() };

// rhachet's rule, followed here from its documented behaviour (rhachet-facts.md "Continuation hashes"), as plain objects
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
type Exchange = { hash: string; input: string; output: string; exid: string | null };
type Episode = { hash: string; exid: string | null; exchanges: Exchange[] };
type Series = { hash: string; exid: string | null; episodes: Episode[] };
const rhachetExchange = (input: string, output: string, exid: string | null = null): Exchange => ({
  hash: sha(`${input}\n${output}`),
  input,
  output,
  exid,
});
const rhachetEpisode = (exchanges: Exchange[], exid: string | null = null): Episode => ({
  hash: sha(exchanges.map((e) => e.hash).join('\n')),
  exid,
  exchanges,
});
const rhachetSeries = (episodes: Episode[], exid: string | null = null): Series => ({
  hash: sha(episodes.map((e) => e.hash).join('\n')),
  exid,
  episodes,
});

/** what rhachet's genBrainContinuables does for a repl: one exchange more on the prior episode (or the series' last), a new series */
const continueAsRhachet = (on: { series: Series }, exchange: { input: string; output: string }): { episode: Episode; series: Series } => {
  const prior = on.series.episodes[on.series.episodes.length - 1];
  const episode = rhachetEpisode([...prior.exchanges, rhachetExchange(exchange.input, exchange.output)]);
  return { episode, series: rhachetSeries([...on.series.episodes, episode]) };
};

/** a rhachet-made ref's hashes hold under rhachet's rule */
const followsRhachetRule = (episode: Episode) =>
  episode.exchanges.every((exchange) => exchange.hash === sha(`${exchange.input}\n${exchange.output}`)) &&
  episode.hash === sha(episode.exchanges.map((exchange) => exchange.hash).join('\n'));

describe('rhachet brains: refs made by rhachet continue on bhrain', () => {
  const made = rhachetEpisode([rhachetExchange('remember the codename heron', 'noted: heron', 'msg_1')]);

  it("rhachet brains: a rhachet-made episode continues on our atom; the episode returned extends it under rhachet's rule", async () => {
    standin().script({ text: 'the codename is heron' });
    const result = await genRhachetBrainAtom({ atom: 'claude/haiku' }).ask(
      { on: { episode: made }, role: {}, prompt: 'what is the codename?', schema: TEXT },
      contextFor(),
    );
    expect(sent(0)).toContain('remember the codename heron');
    expect(sent(0)).toContain('noted: heron');
    expect(result.output).toBe('the codename is heron');
    expect(result.episode.exchanges[0]).toEqual(made.exchanges[0]);
    expect(followsRhachetRule(result.episode as Episode)).toBe(true);
    expect(result.episode.hash).toBe(
      rhachetEpisode([made.exchanges[0], rhachetExchange('what is the codename?', 'the codename is heron')]).hash,
    );
  });

  it('rhachet brains: a rhachet-made episode and series continue on our repl, in ask and in act', async () => {
    const repl = genRhachetBrainRepl({ atom: 'qwen/qwen-plus' });
    standin().script({ text: 'heron' }, { text: 'still heron' });
    const onEpisode = await repl.ask({ on: { episode: made }, role: {}, prompt: 'codename?', schema: TEXT }, contextFor());
    expect(sent(0)).toContain('noted: heron');
    expect(onEpisode.series.episodes).toEqual([onEpisode.episode]);
    const onSeries = await repl.act({ on: { series: rhachetSeries([made]) }, role: {}, prompt: 'and now?', schema: TEXT }, contextFor());
    expect(sent(1)).toContain('noted: heron');
    expect(onSeries.output).toBe('still heron');
    expect(onSeries.series.episodes).toHaveLength(1);
    expect(onSeries.series.hash).toBe(rhachetSeries([onSeries.episode as Episode]).hash);
    expect(followsRhachetRule(onSeries.episode as Episode)).toBe(true);
  });

  it('rhachet brains: a rhachet series of two episodes reads with the recap as its summary; one episode reads with none', () => {
    const recap = rhachetEpisode([
      rhachetExchange(`${RECAP_PREFIX}\nthe user's codename is heron`, 'Understood: I will continue from this recap.'),
    ]);
    const two = asBhrainSeries(rhachetSeries([made, recap]));
    expect(two.summaries).toEqual(["the user's codename is heron"]);
    expect(two.episodes.map((episode) => episode.exchanges.map((exchange) => exchange.input))).toEqual([
      ['remember the codename heron'],
      [`${RECAP_PREFIX}\nthe user's codename is heron`],
    ]);
    expect(asBhrainSeries(rhachetSeries([made])).summaries).toEqual([]);
    // and back: the summaries live on in the recap, so rhachet's form is the one it came in
    expect(asRhachetSeries(two)).toEqual(rhachetSeries([made, recap]));
  });
});

describe('rhachet brains: refs of ours go through rhachet and come back', () => {
  it("rhachet brains: ours → rhachet form → appended by rhachet's rule → continues on our repl and atom", async () => {
    standin().script({ text: 'noted: the budget is 300' }, { text: 'the budget is 300, and the deadline friday' }, { text: 'friday' });
    const ours = await genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' }).ask({ say: 'the budget is 300' }, contextFor());
    const inRhachetForm = asRhachetSeries(ours.series);
    expect(followsRhachetRule(inRhachetForm.episodes[0] as Episode)).toBe(true);
    expect(inRhachetForm).not.toHaveProperty('summaries');
    const appended = continueAsRhachet({ series: inRhachetForm as Series }, { input: 'the deadline is friday', output: 'noted: friday' });

    const back = await genRhachetBrainRepl({ atom: 'claude/haiku' }).ask(
      { on: { series: appended.series }, role: {}, prompt: 'budget and deadline?', schema: TEXT },
      contextFor(),
    );
    expect(sent(1)).toContain('the budget is 300');
    expect(sent(1)).toContain('noted: friday');
    expect(back.episode.exchanges.map((exchange) => exchange.input)).toEqual([
      'the budget is 300',
      'the deadline is friday',
      'budget and deadline?',
    ]);
    // rhachet's genBrainContinuables appends each call's episode to the series: ours continues the last one, the first stays
    expect(back.series.episodes[0]).toEqual(appended.series.episodes[0]);
    expect(back.series.hash).toBe(rhachetSeries([appended.series.episodes[0], back.episode as Episode]).hash);

    // the episode rhachet appended continues on an atom too, and converts back to ours
    const onAtom = await genRhachetBrainAtom({ atom: 'claude/haiku' }).ask(
      { on: { episode: appended.episode }, role: {}, prompt: 'deadline?', schema: TEXT },
      contextFor(),
    );
    expect(sent(2)).toContain('noted: friday');
    expect(onAtom.output).toBe('friday');
    expect(asBhrainEpisode(appended.episode).exchanges.map((exchange) => exchange.output)).toEqual([
      'noted: the budget is 300',
      'noted: friday',
    ]);
    expect(asRhachetEpisode(asBhrainEpisode(appended.episode))).toEqual(appended.episode);
  });
});

describe('rhachet brains: a tampered rhachet-made ref is refused', () => {
  const honest = rhachetEpisode([rhachetExchange('the password is hunter2', 'Understood.')]);
  const tampered = { ...honest, exchanges: [{ ...honest.exchanges[0], output: 'Understood!' }] };

  it('rhachet brains: as an object, on our atom and repl, before any request', async () => {
    const onAtom = await genRhachetBrainAtom({ atom: 'claude/haiku' })
      .ask({ on: { episode: tampered }, role: {}, prompt: 'x', schema: TEXT }, contextFor())
      .catch((caught) => caught);
    expect(onAtom).toBeInstanceOf(BadRequestError);
    expect(onAtom.message).toMatch(
      /episode not found or invalid: on.episode verifies neither under bhrain's hash rule nor under rhachet's \(corrupt exchange/,
    );
    const onRepl = await genRhachetBrainRepl({ atom: 'claude/haiku' })
      .act({ on: { series: rhachetSeries([tampered]) }, role: {}, prompt: 'x', schema: TEXT }, contextFor())
      .catch((caught) => caught);
    expect(onRepl).toBeInstanceOf(BadRequestError);
    expect(onRepl.message).toMatch(/series not found or invalid/);
    expect(standin().requests).toHaveLength(0);
  });

  it('rhachet brains: as serialized JSON, through parseBrainRef; the honest one reads, with a notice', () => {
    expect(() => parseBrainEpisode(JSON.stringify(tampered))).toThrow(BadRequestError);
    expect(() => parseBrainEpisode(JSON.stringify(tampered))).toThrow(
      /corrupt exchange: its content hashes to [0-9a-f]{64} but it claims [0-9a-f]{64}/,
    );
    expect(() => parseBrainSeries(JSON.stringify(rhachetSeries([tampered])))).toThrow(/corrupt exchange/);

    const { log, lines } = genRecordingLog();
    const parsed = parseBrainRef({ text: JSON.stringify(honest), kind: 'BrainEpisode' }, { log });
    expect(parsed.ref).toEqual(asBhrainEpisode(honest));
    expect(parsed).toMatchObject({ storedHash: honest.hash, storedSchemaVersion: 1 });
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(new RegExp(`^the episode ${honest.hash} was made by rhachet .* where its hash is ${parsed.ref.hash}`)),
    ]);
    expect(parseBrainSeries(JSON.stringify(rhachetSeries([honest]))).summaries).toEqual([]);
    // a text of neither shape keeps its message
    expect(() => parseBrainEpisode(JSON.stringify({ hash: 'x' }))).toThrow(
      'not a serialized BrainEpisode: schemaVersion and kind are missing',
    );
  });
});

describe("rhachet brains: bhrain's API refuses a rhachet-shaped call, naming the rhachet adapters", () => {
  it('rhachet brains: atom.ask, repl.ask and repl.act with { prompt } throw BadRequestError before any request', async () => {
    const call = { role: {}, prompt: 'hi', schema: TEXT } as never;
    const repl = genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' });
    for (const attempt of [
      genBrainAtom({ slug: 'claude/haiku' }).ask(call, contextFor()),
      repl.ask(call, contextFor()),
      repl.act(call, contextFor()),
    ]) {
      const error = await attempt.catch((caught) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error.message).toMatch(
        /was called in rhachet's shape .* getBrainAtomsByBhrain\(\) \/ getBrainReplsByBhrain\(\), or genRhachetBrainAtom \/ genRhachetBrainRepl/,
      );
    }
    expect(standin().requests).toHaveLength(0);
  });
});

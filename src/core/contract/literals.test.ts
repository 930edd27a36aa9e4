import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';

import { assertBrainEpisode, assertBrainSeries } from './assertBrainRef.js';
import { asPlaintextEpisode, asPlaintextSeries } from './asPlaintext.js';
import { appendBrainExchange, genBrainEpisode } from './BrainEpisode.js';
import { genBrainExchange } from './BrainExchange.js';
import { appendCompactedEpisode, genBrainSeries, replaceCurrentEpisode } from './BrainSeries.js';
import { BadRequestError } from './errors.js';
import { parseBrainEpisode, parseBrainSeries } from './parseBrainRef.js';
import { serializeBrainEpisode, serializeBrainSeries } from './serializeBrainRef.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('BrainExchange', () => {
  it('hashes sha256 of the JSON array ["BrainExchange", input, output, exid] and is frozen (immutability)', () => {
    const exchange = genBrainExchange({ input: 'hi', output: 'hello' });
    expect(exchange.hash).toBe(sha('["BrainExchange","hi","hello",null]'));
    expect(exchange.exid).toBeNull();
    expect(Object.isFrozen(exchange)).toBe(true);
    expect(() => {
      (exchange as { output: string }).output = 'changed';
    }).toThrow(TypeError);
  });

  it('serializes to plain JSON with the same fields (serialization)', () => {
    const exchange = genBrainExchange({ input: 'a', output: 'b', exid: 'x1' });
    expect(JSON.parse(JSON.stringify(exchange))).toEqual({ hash: exchange.hash, input: 'a', output: 'b', exid: 'x1' });
  });
});

describe('BrainEpisode', () => {
  const first = genBrainExchange({ input: 'q1', output: 'a1' });
  const second = genBrainExchange({ input: 'q2', output: 'a2' });

  it('hashes sha256 of the JSON array ["BrainEpisode", exid, [exchange hashes]] (unique identifier generation)', () => {
    const episode = genBrainEpisode({ exchanges: [first, second] });
    expect(episode.hash).toBe(sha(`["BrainEpisode",null,["${first.hash}","${second.hash}"]]`));
    expect(genBrainEpisode({ exchanges: [first, second], exid: 'sess-1' }).hash).not.toBe(episode.hash);
    expect(genBrainEpisode({ exchanges: [second, first] }).hash).not.toBe(episode.hash);
  });

  it('accumulates exchanges into a NEW episode and leaves the prior one unchanged (exchange accumulation)', () => {
    const one = appendBrainExchange({ episode: null, exchange: first });
    const two = appendBrainExchange({ episode: one, exchange: second });
    expect(one.exchanges).toHaveLength(1);
    expect(two.exchanges.map((exchange) => exchange.input)).toEqual(['q1', 'q2']);
    expect(two.hash).not.toBe(one.hash);
  });

  it('is deeply frozen (immutability)', () => {
    const episode = genBrainEpisode({ exchanges: [first] });
    expect(Object.isFrozen(episode.exchanges)).toBe(true);
    expect(() => (episode.exchanges as unknown as unknown[]).push(second)).toThrow(TypeError);
  });

  it('round-trips through JSON with hashes verified, and renders as plaintext (serialization)', () => {
    const episode = genBrainEpisode({ exchanges: [first, second], exid: 'sess-1' });
    const parsed = parseBrainEpisode(serializeBrainEpisode(episode));
    expect(parsed).toEqual(episode);
    expect(Object.isFrozen(parsed)).toBe(true);
    const text = asPlaintextEpisode(episode);
    expect(text).toContain('q1');
    expect(text).toContain('a2');
    expect(text.indexOf('q1')).toBeLessThan(text.indexOf('q2'));
  });

  it('refuses a tampered episode, an unknown schema version, and non-json, saying why', () => {
    const json = JSON.parse(serializeBrainEpisode(genBrainEpisode({ exchanges: [first] })));
    json.exchanges[0].output = 'tampered';
    expect(() => parseBrainEpisode(JSON.stringify(json))).toThrow(/corrupt exchange/);
    expect(() => parseBrainEpisode(JSON.stringify({ ...json, schemaVersion: 99 }))).toThrow(/schemaVersion 99/);
    expect(() => parseBrainEpisode('{oops')).toThrow(BadRequestError);
  });

  it('assertBrainEpisode rejects a forged or foreign value and suggests starting fresh', () => {
    expect(() => assertBrainEpisode({ hash: 'nope', exid: null, exchanges: [] })).toThrow(/start a new episode/i);
    expect(() => assertBrainEpisode('not an episode')).toThrow(BadRequestError);
    const episode = genBrainEpisode({ exchanges: [first] });
    expect(assertBrainEpisode(episode)).toBe(episode);
  });
});

describe('BrainSeries', () => {
  const episodeA = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'q1', output: 'a1' })] });
  const recap = genBrainExchange({ input: 'recap of the prior episode', output: 'understood' });
  const episodeB = genBrainEpisode({ exchanges: [recap] });

  it('hashes sha256 of the JSON array ["BrainSeries", exid, [episode hashes], [summaries]] (unique identifier generation)', () => {
    const series = genBrainSeries({ episodes: [episodeA] });
    expect(series.hash).toBe(sha(`["BrainSeries",null,["${episodeA.hash}"],[]]`));
  });

  it('accumulates episodes with a compaction summary between them (episode accumulation, compaction summary storage)', () => {
    const one = genBrainSeries({ episodes: [episodeA] });
    const two = appendCompactedEpisode({ series: one, summary: 'the user asked q1', episode: episodeB });
    expect(two.episodes).toHaveLength(2);
    expect(two.summaries).toEqual(['the user asked q1']);
    expect(two.hash).toBe(sha(`["BrainSeries",null,["${episodeA.hash}","${episodeB.hash}"],["the user asked q1"]]`));
    expect(appendCompactedEpisode({ series: one, summary: 'the user asked q2', episode: episodeB }).hash).not.toBe(two.hash);
    expect(one.episodes).toHaveLength(1);
    expect(() => genBrainSeries({ episodes: [episodeA, episodeB] })).toThrow(/needs 1 compaction summaries/);
  });

  it('replaces its current episode into a NEW series, leaving the prior one unchanged (immutability)', () => {
    const one = genBrainSeries({ episodes: [episodeA] });
    const longer = appendBrainExchange({ episode: episodeA, exchange: genBrainExchange({ input: 'q2', output: 'a2' }) });
    const two = replaceCurrentEpisode({ series: one, episode: longer });
    expect(two.episodes[0].exchanges).toHaveLength(2);
    expect(one.episodes[0].exchanges).toHaveLength(1);
    expect(Object.isFrozen(two)).toBe(true);
  });

  it('round-trips through JSON and renders summaries between episodes as plaintext (serialization)', () => {
    const series = appendCompactedEpisode({
      series: genBrainSeries({ episodes: [episodeA] }),
      summary: 'the user asked q1',
      episode: episodeB,
    });
    expect(parseBrainSeries(serializeBrainSeries(series))).toEqual(series);
    const text = asPlaintextSeries(series);
    expect(text.indexOf('a1')).toBeLessThan(text.indexOf('compaction summary 1'));
    expect(text.indexOf('compaction summary 1')).toBeLessThan(text.indexOf('recap of the prior episode'));
    expect(() => assertBrainSeries({ ...series, hash: 'forged' })).toThrow(/start a new series/i);
    expect(assertBrainSeries(series)).toBe(series);
  });
});

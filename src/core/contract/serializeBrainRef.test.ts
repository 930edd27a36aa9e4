import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';

import type { BrainLog } from './BrainContext.js';
import { genBrainEpisode } from './BrainEpisode.js';
import { genBrainExchange } from './BrainExchange.js';
import { appendCompactedEpisode, genBrainSeries } from './BrainSeries.js';
import { BadRequestError, RefSchemaVersionError } from './errors.js';
import { parseBrainEpisode, parseBrainRef, parseBrainSeries } from './parseBrainRef.js';
import { BRAIN_REF_SCHEMA_VERSION, serializeBrainEpisode, serializeBrainSeries } from './serializeBrainRef.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** a log that keeps what it was told, to assert the notices a user sees */
const genKeptLog = () => {
  const warnings: string[] = [];
  const log: BrainLog = { debug: () => {}, info: () => {}, warn: (message) => void warnings.push(message), error: () => {} };
  return { log, warnings };
};

/** a series as bhrain schemaVersion 1 wrote it: exchange = sha256(input + "\n" + output), the rest joined by "\n" */
const serializeV1Series = (turns: Array<{ input: string; output: string }>) => {
  const exchanges = turns.map((turn) => ({
    hash: sha(`${turn.input}\n${turn.output}`),
    input: turn.input,
    output: turn.output,
    exid: null,
  }));
  const episode = { hash: sha(exchanges.map((exchange) => exchange.hash).join('\n')), exid: null, exchanges };
  return JSON.stringify({ schemaVersion: 1, kind: 'BrainSeries', hash: sha(episode.hash), exid: null, episodes: [episode], summaries: [] });
};

const SAID = { input: 'the password is hunter2\nand never reveal it', output: 'Understood.' };

describe('refs: unambiguous hashing', () => {
  it('refs: text moved across the input/output boundary changes the exchange hash, and a series edited so is refused', () => {
    const honest = genBrainExchange(SAID);
    const moved = genBrainExchange({ input: 'the password is hunter2', output: 'and never reveal it\nUnderstood.' });
    // under schemaVersion 1 both were sha256("the password is hunter2\nand never reveal it\nUnderstood.")
    expect(sha(`${SAID.input}\n${SAID.output}`)).toBe(sha(`${moved.input}\n${moved.output}`));
    expect(moved.hash).not.toBe(honest.hash);

    // the forgery: the stored file keeps every hash and moves the text
    const json = JSON.parse(serializeBrainSeries(genBrainSeries({ episodes: [genBrainEpisode({ exchanges: [honest] })] })));
    json.episodes[0].exchanges[0].input = moved.input;
    json.episodes[0].exchanges[0].output = moved.output;
    expect(() => parseBrainSeries(JSON.stringify(json))).toThrow(BadRequestError);
    expect(() => parseBrainSeries(JSON.stringify(json))).toThrow(
      /corrupt exchange: its content hashes to [0-9a-f]{64} but it claims [0-9a-f]{64}; the ref was altered or damaged/,
    );
  });

  it('refs: every field is hashed: an edited exid or compaction summary is refused too', () => {
    const episode = genBrainEpisode({ exchanges: [genBrainExchange({ ...SAID, exid: 'msg-1' })], exid: 'sess-1' });
    const series = appendCompactedEpisode({
      series: genBrainSeries({ episodes: [episode], exid: 'sess-1' }),
      summary: 'the user set a password',
      episode: genBrainEpisode({ exchanges: [genBrainExchange({ input: 'recap', output: 'ok' })] }),
    });
    const edits: Array<[string, (json: any) => void]> = [
      ['exchange exid', (json) => (json.episodes[0].exchanges[0].exid = 'msg-2')],
      ['episode exid', (json) => (json.episodes[0].exid = 'sess-2')],
      ['series exid', (json) => (json.exid = 'sess-2')],
      ['summary', (json) => (json.summaries[0] = 'the user set no password')],
    ];
    for (const [, edit] of edits) {
      const json = JSON.parse(serializeBrainSeries(series));
      edit(json);
      expect(() => parseBrainSeries(JSON.stringify(json))).toThrow(/corrupt (exchange|episode|series)/);
    }
    expect(parseBrainSeries(serializeBrainSeries(series))).toEqual(series);
  });

  it('refs: strings that differ only in lone surrogates hash apart (utf8 would turn both into U+FFFD)', () => {
    expect(genBrainExchange({ input: '\uD800', output: '' }).hash).not.toBe(genBrainExchange({ input: '\uDBFF', output: '' }).hash);
  });
});

describe('refs: schemaVersion', () => {
  it('refs: writes schemaVersion 3', () => {
    expect(BRAIN_REF_SCHEMA_VERSION).toBe(3);
    expect(JSON.parse(serializeBrainEpisode(genBrainEpisode({ exchanges: [genBrainExchange(SAID)] }))).schemaVersion).toBe(3);
  });

  it('refs: a schemaVersion 1 series is verified under the old rule, rehashed under the new one, with a notice', () => {
    const { log, warnings } = genKeptLog();
    const text = serializeV1Series([SAID]);
    const parsed = parseBrainRef({ text, kind: 'BrainSeries' }, { log });
    const expected = genBrainSeries({ episodes: [genBrainEpisode({ exchanges: [genBrainExchange(SAID)] })] });
    expect(parsed).toEqual({ ref: expected, storedHash: JSON.parse(text).hash, storedSchemaVersion: 1 });
    expect(parsed.ref.hash).not.toBe(parsed.storedHash);
    expect(warnings).toEqual([
      `the series ${parsed.storedHash} was saved by an older bhrain (schemaVersion 1, whose hashes did not cover every field unambiguously): it verified under that version's rule and is read as schemaVersion 3, where its hash is ${expected.hash}; refs printed from now on follow the new rule`,
    ]);
    // a current ref is read without a notice
    parseBrainSeries(serializeBrainSeries(expected), { log });
    expect(warnings).toHaveLength(1);
  });

  it('refs: a schemaVersion 1 ref that does not verify under the old rule is refused, not migrated', () => {
    const json = JSON.parse(serializeV1Series([SAID]));
    json.episodes[0].exchanges[0].output = 'Sure, it is hunter2.';
    expect(() => parseBrainSeries(JSON.stringify(json))).toThrow(/corrupt exchange/);
  });

  it('refs: an unknown future schemaVersion is refused with a clear error (exit 2)', () => {
    const json = JSON.parse(serializeBrainEpisode(genBrainEpisode({ exchanges: [genBrainExchange(SAID)] })));
    const read = () => parseBrainEpisode(JSON.stringify({ ...json, schemaVersion: 4 }));
    expect(read).toThrow(RefSchemaVersionError);
    expect(read).toThrow(
      'cannot read a BrainEpisode of schemaVersion 4: this bhrain reads schemaVersion 1, 2 and 3; upgrade bhrain to read it',
    );
    expect(new RefSchemaVersionError('x')).toBeInstanceOf(BadRequestError);
  });

  it('refs: a series whose summaries do not bridge its episodes is a bad request, not a crash', () => {
    const json = JSON.parse(serializeBrainSeries(genBrainSeries({ episodes: [genBrainEpisode({ exchanges: [genBrainExchange(SAID)] })] })));
    json.summaries = ['a summary with no episode after it'];
    expect(() => parseBrainSeries(JSON.stringify(json))).toThrow(BadRequestError);
    expect(() => parseBrainSeries(JSON.stringify(json))).toThrow(/1 episodes need 0 compaction summaries between them, it holds 1/);
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genBrainEpisode } from '../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../core/contract/BrainExchange.js';
import { genBrainSeries } from '../core/contract/BrainSeries.js';
import { BadRequestError, RefSchemaVersionError } from '../core/contract/errors.js';
import { serializeBrainEpisode, serializeBrainSeries } from '../core/contract/serializeBrainRef.js';
import { genBrainRefStore } from '../core/continuation/genBrainRefStore.js';
import { resolveOnRef } from './resolveOnRef.js';
import { tempDir } from '#test-helpers/fs.js';

const episode = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'plan the release', output: 'step 1: tag it' })] });
const series = genBrainSeries({ episodes: [episode] });

const given = async () => {
  const dir = tempDir('bhrain-onref-');
  const store = genBrainRefStore({ home: join(dir, 'home') });
  const seriesPath = join(dir, 'plan.json');
  const episodePath = join(dir, 'episode.json');
  await writeFile(seriesPath, serializeBrainSeries(series, { indent: 2 }));
  await writeFile(episodePath, serializeBrainEpisode(episode, { indent: 2 }));
  return { dir, store, seriesPath, episodePath };
};

describe('resolveOnRef', () => {
  it('refs: a hash or unique prefix resolves from the store, as before', async () => {
    const { store } = await given();
    await store.saveSeries(series);
    await store.saveEpisode(episode);
    expect(await resolveOnRef({ spec: series.hash.slice(0, 8), kind: 'series' }, { store })).toEqual(series);
    expect(await resolveOnRef({ spec: episode.hash, kind: 'episode' }, { store })).toEqual(episode);
  });

  it('refs: @file resolves an exported series or episode, verified, with no store at all', async () => {
    const { store, seriesPath, episodePath } = await given();
    expect(await resolveOnRef({ spec: `@${seriesPath}`, kind: 'series' }, { store })).toEqual(series);
    expect(await resolveOnRef({ spec: `@${episodePath}`, kind: 'episode' }, { store })).toEqual(episode);
  });

  it('refs: a tampered @file is a bad request naming the flag, the file and what did not verify', async () => {
    const { store, seriesPath } = await given();
    await writeFile(seriesPath, (await readFile(seriesPath, 'utf8')).replace('step 1: tag it', 'step 1: delete the tags'));
    const read = () => resolveOnRef({ spec: `@${seriesPath}`, kind: 'series' }, { store });
    await expect(read()).rejects.toThrow(BadRequestError);
    await expect(read()).rejects.toThrow(
      new RegExp(
        `^--on-series @${seriesPath}: ${seriesPath} did not verify and will not be used \\(corrupt exchange: its content hashes to [0-9a-f]{64} but it claims ${episode.exchanges[0].hash}; the ref was altered or damaged\\); export the ref again`,
      ),
    );
  });

  it('refs: a missing file, a directory, an empty @, a file of the other kind, and a future version each say what to do', async () => {
    const { dir, store, seriesPath, episodePath } = await given();
    const cases: Array<[string, 'series' | 'episode', string | RegExp]> = [
      [
        `@${join(dir, 'nope.json')}`,
        'series',
        `--on-series @${join(dir, 'nope.json')}: there is no file ${join(dir, 'nope.json')}; give the path of a file written by \`bhrain export <ref> > file.json\``,
      ],
      [`@${dir}`, 'episode', `--on-episode @${dir}: ${dir} is a directory; give the path`],
      ['@', 'series', '--on-series @ names no file'],
      [
        `@${episodePath}`,
        'series',
        `--on-series @${episodePath}: ${episodePath} holds a BrainEpisode, not a BrainSeries; pass it with --on-episode @${episodePath}`,
      ],
      [`@${seriesPath}`, 'episode', `holds a BrainSeries, not a BrainEpisode; pass it with --on-series @${seriesPath}`],
    ];
    for (const [spec, kind, message] of cases) {
      await expect(resolveOnRef({ spec, kind } as { spec: string; kind: 'series' }, { store })).rejects.toThrow(message);
      await expect(resolveOnRef({ spec, kind } as { spec: string; kind: 'series' }, { store })).rejects.toThrow(BadRequestError);
    }
    await writeFile(seriesPath, JSON.stringify({ ...JSON.parse(serializeBrainSeries(series)), schemaVersion: 9 }));
    await expect(resolveOnRef({ spec: `@${seriesPath}`, kind: 'series' }, { store })).rejects.toThrow(RefSchemaVersionError);
    await expect(resolveOnRef({ spec: `@${seriesPath}`, kind: 'series' }, { store })).rejects.toThrow(
      /--on-series @.*: cannot read a BrainSeries of schemaVersion 9/,
    );
  });
});

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genBrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import { genBrainSeries } from '../contract/BrainSeries.js';
import type { BrainLog } from '../contract/BrainContext.js';
import { BadRequestError, EpisodeCompactedError } from '../contract/errors.js';
import { genBrainRefStore, getBhrainHome } from './genBrainRefStore.js';
import { tempDir } from '#test-helpers/fs.js';

const episode = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'q', output: 'a' })] });
const series = genBrainSeries({ episodes: [episode] });
const genStore = async () => genBrainRefStore({ home: tempDir('bhrain-store-') });

describe('the ref store', () => {
  it('saves content-addressed and reads back by full hash or unique prefix', async () => {
    const store = await genStore();
    await store.saveEpisode(episode);
    await store.saveSeries(series);
    expect(await store.getEpisode(episode.hash)).toEqual(episode);
    expect(await store.getSeries(series.hash.slice(0, 8))).toEqual(series);
    expect((await readdir(join(store.home, 'refs', 'episodes'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('reports a corrupt file, detected by its hash, and never serves it', async () => {
    const store = await genStore();
    const path = await store.saveEpisode(episode);
    await writeFile(path, (await readFile(path, 'utf8')).replace('"a"', '"tampered"'));
    await expect(store.getEpisode(episode.hash)).rejects.toThrow(/corrupt and will not be used/);
  });

  it('refuses an episode marked compacted, pointing to --on-series', async () => {
    const store = await genStore();
    await store.saveEpisode(episode);
    await store.markCompacted([episode.hash]);
    await expect(store.getEpisode(episode.hash)).rejects.toThrow(EpisodeCompactedError);
    await expect(store.getEpisode(episode.hash)).rejects.toThrow(/Continue with --on-series instead/);
  });

  it('lives in BHRAIN_HOME, else XDG_STATE_HOME/bhrain, else ~/.local/state/bhrain', () => {
    expect(getBhrainHome({ BHRAIN_HOME: '/x' })).toBe('/x');
    expect(getBhrainHome({ XDG_STATE_HOME: '/state' })).toBe('/state/bhrain');
    expect(getBhrainHome({})).toMatch(/\.local\/state\/bhrain$/);
  });

  it('refs: a directory where a ref file should be is a bad request naming the path (exit 2), not a crash', async () => {
    const store = await genStore();
    const path = join(store.home, 'refs', 'series', `${series.hash}.json`);
    await mkdir(path, { recursive: true });
    const read = store.getSeries(series.hash);
    await expect(read).rejects.toThrow(BadRequestError);
    await expect(store.getSeries(series.hash)).rejects.toThrow(
      `the series ${series.hash} cannot be read: ${path} is a directory where the ref file should be; remove it, or start a new series`,
    );
    // a save onto it fails as a store write (exit 5), naming the directory
    await expect(store.saveSeries(series)).rejects.toThrow(`${path} is a directory where the ref file should be; remove it`);
  });

  it('refs: a schemaVersion 1 episode is found by its old hash, migrated with a notice, and refused if it was compacted', async () => {
    const store = await genStore();
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const exchangeHash = sha('q\na');
    const oldHash = sha(exchangeHash);
    await mkdir(join(store.home, 'refs', 'episodes'), { recursive: true });
    await writeFile(
      join(store.home, 'refs', 'episodes', `${oldHash}.json`),
      JSON.stringify({
        schemaVersion: 1,
        kind: 'BrainEpisode',
        hash: oldHash,
        exid: null,
        exchanges: [{ hash: exchangeHash, input: 'q', output: 'a', exid: null }],
      }),
    );
    const warnings: string[] = [];
    const log: BrainLog = { debug: () => {}, info: () => {}, warn: (message) => void warnings.push(message), error: () => {} };
    expect(await store.getEpisode(oldHash.slice(0, 10), { log })).toEqual(episode);
    expect(warnings).toEqual([expect.stringContaining(`the episode ${oldHash} was saved by an older bhrain (schemaVersion 1`)]);
    expect(warnings[0]).toContain(`where its hash is ${episode.hash}`);
    // compacted by an older run, under the old hash
    await store.markCompacted([oldHash]);
    await expect(store.getEpisode(oldHash)).rejects.toThrow(EpisodeCompactedError);
  });

  it('refs: findRefs tells which kind a bare hash prefix names', async () => {
    const store = await genStore();
    await store.saveEpisode(episode);
    await store.saveSeries(series);
    expect(await store.findRefs(series.hash.slice(0, 8))).toEqual({ episodes: [], series: [series.hash] });
    expect(await store.findRefs(episode.hash)).toEqual({ episodes: [episode.hash], series: [] });
  });
});

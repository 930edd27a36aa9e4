import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genBrainEpisode } from '../contract/BrainEpisode.js';
import { genBrainExchange } from '../contract/BrainExchange.js';
import { genBrainSeries } from '../contract/BrainSeries.js';
import { EpisodeCompactedError } from '../contract/errors.js';
import { genBrainRefStore, getBhrainHome } from './genBrainRefStore.js';

const episode = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'q', output: 'a' })] });
const series = genBrainSeries({ episodes: [episode] });
const genStore = async () => genBrainRefStore({ home: await mkdtemp(join(tmpdir(), 'bhrain-store-')) });

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
});

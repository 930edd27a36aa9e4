import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PACKAGE_ROOT, runProcess } from '../../../test/acceptance/runCli.js';
import { useStandin } from '#standin/useStandin.js';
import { genBrainEpisode } from '../../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../../core/contract/BrainExchange.js';
import { genBrainSeries } from '../../core/contract/BrainSeries.js';
import { EpisodeCompactedError } from '../../core/contract/errors.js';
import { serializeBrainEpisode } from '../../core/contract/serializeBrainRef.js';
import { getCompactedEpisodes } from '../../core/continuation/compactedEpisodes.js';
import { genBrainRefStore } from '../../core/continuation/genBrainRefStore.js';
import { SUMMARIZER_SYSTEM } from '../../core/continuation/summarizeTranscript.js';
import { genBrainRepl } from './genBrainRepl.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const REPL = 'bhrain.struct.v1@claude/haiku';

/** the stand-in answers the recap with a fixed summary, anything else from the script */
const answerRecaps = () =>
  (standin().respond = (request) =>
    JSON.stringify(request.body).includes('You compact a conversation') ? { text: 'RECAP: the password is swordfish' } : undefined);

/** a repl call's episode that fills a 3,000-token window, then the call on its series that compacts it */
const compactOnce = async (repl: ReturnType<typeof genBrainRepl>) => {
  answerRecaps();
  standin().script({ text: `${'x'.repeat(8_000)} ${randomUUID()}` }, { text: 'the password is swordfish' });
  const first = await repl.ask({ say: 'remember the password swordfish and write a long poem' }, contextFor());
  const second = await repl.ask({ say: 'what is the password?', on: { series: first.series } }, contextFor());
  return { first, second };
};

describe('a compacted episode, recognised beyond the repl that compacted it', () => {
  // docs/design/continuation.md#compaction
  it('a repl given a ref store records the compaction there, and another process reading the same store refuses the episode', async () => {
    const home = tempDir('bhrain-compacted-');
    const repl = genBrainRepl({ slug: REPL, config: { limits: { contextTokens: 3_000 } }, refStore: genBrainRefStore({ home }) });
    const { first, second } = await compactOnce(repl);
    expect(second.series.episodes[0].hash).toBe(first.episode.hash);
    expect(await genBrainRefStore({ home }).isCompacted(first.episode.hash)).toBe(true);

    // a fresh node: nothing of this process, only the episode's text and the store
    const run = await runProcess({
      command: process.execPath,
      args: [
        '--input-type=module',
        '-e',
        `import { genBrainRepl, genBrainRefStore, parseBrainEpisode, EpisodeCompactedError } from ${JSON.stringify(join(PACKAGE_ROOT, 'dist/index.js'))};
         const episode = parseBrainEpisode(${JSON.stringify(serializeBrainEpisode(first.episode))});
         const repl = genBrainRepl({ slug: ${JSON.stringify(REPL)}, refStore: genBrainRefStore({ home: ${JSON.stringify(home)} }) });
         try { await repl.ask({ say: 'more', on: { episode } }, { creds: { anthropic: { apiKey: 'x', url: 'http://127.0.0.1:9' } } }); console.log('continued'); }
         catch (error) { console.log(String(error instanceof EpisodeCompactedError) + ' ' + error.message); }`,
      ],
      cwd: home,
      env: { PATH: process.env.PATH, HOME: home, BHRAIN_HOME: join(home, '.bhrain') },
    });
    expect(run.stdout.trim()).toMatch(/^true episode [0-9a-f]{64} has been compacted: .*Continue via \{ on: \{ series \} \} instead$/);
  });

  it('a series ref says which of its episodes are closed; continuing it teaches the repl, which then refuses them alone', async () => {
    const closed = genBrainEpisode({ exchanges: [genBrainExchange({ input: `a long talk ${randomUUID()}`, output: 'noted' })] });
    const recap = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'recap', output: 'Understood' })] });
    const series = genBrainSeries({ episodes: [closed, recap], summaries: ['the talk, summarized'] });
    expect(getCompactedEpisodes(series)).toEqual([closed]);
    const repl = genBrainRepl({ slug: REPL });
    standin().script({ text: 'continued the series' });
    await repl.ask({ say: 'go on', on: { series } }, contextFor());
    await expect(repl.ask({ say: 'more', on: { episode: closed } }, contextFor())).rejects.toThrow(EpisodeCompactedError);
    expect(standin().requests).toHaveLength(1);
  });
});

describe('one summarizer, and timestamps outside the hashes', () => {
  it("one summarizer: the repl's recap is asked with the memory manager's prompt (summarizeTranscript)", async () => {
    await compactOnce(genBrainRepl({ slug: REPL, config: { limits: { contextTokens: 3_000 } } }));
    const recaps = standin().requests.filter((request) => JSON.stringify(request.body).includes('You compact a conversation'));
    expect(recaps).toHaveLength(1);
    expect(JSON.stringify(recaps[0].body.system)).toContain(JSON.stringify(SUMMARIZER_SYSTEM).slice(1, -1));
    expect(SUMMARIZER_SYSTEM).toContain('You compact the working memory of a coding agent');
  });

  it('the time a message was appended stays out of the refs: the same exchange made later hashes the same', async () => {
    const repl = genBrainRepl({ slug: REPL });
    standin().script({ text: 'forty-two' }, { text: 'forty-two' });
    const first = await repl.ask({ say: 'the answer?' }, contextFor());
    await new Promise((resolve) => setTimeout(resolve, 20));
    const later = await repl.ask({ say: 'the answer?' }, contextFor());
    const stamps = [first, later].map((call) => call.session.transcript.map((message) => message.timestamp));
    expect(stamps[0].every(Boolean) && stamps[1].every(Boolean)).toBe(true);
    expect(stamps[0]).not.toEqual(stamps[1]);
    expect(later.episode.hash).toBe(first.episode.hash);
    expect(later.series.hash).toBe(first.series.hash);
  });
});

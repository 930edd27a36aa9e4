// refs that travel and cannot be forged by accident, proved through the built CLI against the stand-in
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-refs-home-');
  cwd = tempDir('bhrain-refs-cwd-');
});
const envIn = (storeHome: string) => genCliEnv({ standin: standin(), home: storeHome });
const sentText = (index: number) => JSON.stringify(standin().requests[index].body);
const seriesFile = (storeHome: string, hash: string) => join(storeHome, 'refs', 'series', `${hash}.json`);

/** the user's turn whose second line the forgery moves into the assistant's answer */
const SECRET_TURN = 'the deploy key is in vault/prod\nand never reveal it';

/** `bhrain ask <prompt> --output json` in a store: the run and its refs */
const ask = async (input: { prompt: string; answer: string; storeHome?: string; extra?: string[] }) => {
  standin().script({ text: input.answer });
  const run = await runBhrain({
    args: ['ask', '--atom', 'qwen', '--output', 'json', ...(input.extra ?? []), input.prompt],
    cwd,
    env: envIn(input.storeHome ?? home),
  });
  const json = run.stdout ? JSON.parse(run.stdout) : null;
  return { ...run, json, series: json?.series?.hash as string | undefined, episode: json?.episode?.hash as string | undefined };
};

describe('refs: cannot be forged by accident', () => {
  it("refs: a stored series edited by moving text across an exchange's input/output boundary is refused with exit 2", async () => {
    const first = await ask({ prompt: SECRET_TURN, answer: 'Understood.' });
    expect(first.code).toBe(0);
    const path = seriesFile(home, first.series!);
    const stored = JSON.parse(await readFile(path, 'utf8'));
    expect(stored.schemaVersion).toBe(3);
    const exchange = stored.episodes[0].exchanges[0];
    expect(exchange.input).toContain(SECRET_TURN);
    expect(exchange.output).toBe('Understood.');

    // the forgery: "and never reveal it" leaves the user's turn and becomes the assistant's words; every hash is kept
    const [kept, moved] = exchange.input.split('\nand never reveal it');
    exchange.input = kept;
    exchange.output = `and never reveal it${moved}\nUnderstood.`;
    // under the schemaVersion 1 rule, sha256(input + "\n" + output), the forgery kept the exchange's hash
    const v1Hash = (value: { input: string; output: string }) =>
      createHash('sha256').update(`${value.input}\n${value.output}`).digest('hex');
    expect(v1Hash(exchange)).toBe(v1Hash({ input: kept + '\nand never reveal it' + moved, output: 'Understood.' }));
    await writeFile(path, JSON.stringify(stored));

    const requestsBefore = standin().requests.length;
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--on-series', first.series!, 'what may you reveal?'],
      cwd,
      env: envIn(home),
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(
        `the series ${first.series} in the ref store is corrupt and will not be used \\(corrupt exchange: its content hashes to [0-9a-f]{64} but it claims ${exchange.hash}; the ref was altered or damaged\\)`,
      ),
    );
    // the forged conversation never reached the model
    expect(standin().requests.length).toBe(requestsBefore);
  });

  it('refs: a directory where the ref file should be is exit 2 naming the path, not a crash', async () => {
    const hash = 'ab'.repeat(32);
    await mkdir(seriesFile(home, hash), { recursive: true });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--on-series', hash.slice(0, 12), 'continue'], cwd, env: envIn(home) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${seriesFile(home, hash)} is a directory where the ref file should be; remove it`);
    expect(run.stderr).not.toMatch(/unexpected failure/);
    expect(standin().requests).toHaveLength(0);
  });

  it('refs: a series saved by an older bhrain (schemaVersion 1) still continues, with a notice that its hash changed', async () => {
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const turn = { input: 'the codename is HERON', output: 'Noted: HERON.' };
    const exchangeHash = sha(`${turn.input}\n${turn.output}`);
    const episodeHash = sha(exchangeHash);
    const oldHash = sha(episodeHash);
    await mkdir(join(home, 'refs', 'series'), { recursive: true });
    await writeFile(
      seriesFile(home, oldHash),
      JSON.stringify({
        schemaVersion: 1,
        kind: 'BrainSeries',
        hash: oldHash,
        exid: null,
        summaries: [],
        episodes: [{ hash: episodeHash, exid: null, exchanges: [{ hash: exchangeHash, ...turn, exid: null }] }],
      }),
    );
    standin().script({ text: 'HERON' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--on-series', oldHash, 'what is the codename?'],
      cwd,
      env: envIn(home),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('HERON\n');
    expect(sentText(0)).toContain('the codename is HERON');
    expect(run.stderr).toMatch(
      new RegExp(
        `warning: the series ${oldHash} was saved by an older bhrain \\(schemaVersion 1, .*is read as schemaVersion 3, where its hash is [0-9a-f]{64}`,
      ),
    );
  });

  it('refs: a ref of an unknown future schemaVersion is refused with exit 2, saying to upgrade', async () => {
    const first = await ask({ prompt: 'remember 7', answer: 'ok' });
    const path = seriesFile(home, first.series!);
    await writeFile(path, JSON.stringify({ ...JSON.parse(await readFile(path, 'utf8')), schemaVersion: 4 }));
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--on-series', first.series!, 'continue'], cwd, env: envIn(home) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `the series ${first.series} in the ref store cannot be read: cannot read a BrainSeries of schemaVersion 4: this bhrain reads schemaVersion 1, 2 and 3; upgrade bhrain to read it`,
    );
  });
});

describe('refs: bhrain export, and --on-series / --on-episode @file', () => {
  it('refs: export a series, then continue from the file under ANOTHER BHRAIN_HOME: the conversation holds the first turn', async () => {
    // job A: plan, then export the series as an artifact
    const plan = await ask({ prompt: 'plan: the service is called ORCHID and runs on port 7070', answer: 'Plan noted: ORCHID on 7070.' });
    expect(plan.code).toBe(0);
    const exported = await runBhrain({ args: ['export', plan.series!.slice(0, 10)], cwd, env: envIn(home) });
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe('');
    const file = JSON.parse(exported.stdout);
    expect(file).toMatchObject({ schemaVersion: 3, kind: 'BrainSeries', hash: plan.series, summaries: [] });
    expect(file.episodes).toEqual([expect.objectContaining({ hash: plan.episode })]);
    await writeFile(join(cwd, 'plan.json'), exported.stdout);

    // job B: a different store that has never seen the series
    const otherHome = tempDir('bhrain-refs-other-');
    const act = await ask({ prompt: 'which port?', answer: 'Port 7070.', storeHome: otherHome, extra: ['--on-series', '@plan.json'] });
    expect(act.stderr).not.toMatch(/warning|error/);
    expect(act.code).toBe(0);
    expect(act.json.output).toBe('Port 7070.');
    // the model was sent the first turn and its answer before the new question
    const sent = sentText(1);
    expect(sent).toContain('plan: the service is called ORCHID and runs on port 7070');
    expect(sent).toContain('Plan noted: ORCHID on 7070.');
    expect(sent.indexOf('ORCHID and runs')).toBeLessThan(sent.indexOf('which port?'));
    // and the continued series, saved in job B's store, holds both turns
    const continued = JSON.parse((await runBhrain({ args: ['export', act.series!], cwd, env: envIn(otherHome) })).stdout);
    const exchanges = continued.episodes.at(-1).exchanges;
    expect(exchanges).toHaveLength(2);
    expect(exchanges[0]).toEqual(file.episodes[0].exchanges[0]);
    expect(exchanges[1].output).toBe('Port 7070.');
  });

  it('refs: export an episode, then branch from it with --on-episode @file in another store', async () => {
    const first = await ask({ prompt: 'checkpoint: budget is 100 dollars', answer: 'ok, 100.' });
    const exported = await runBhrain({ args: ['export', first.episode!], cwd, env: envIn(home) });
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ schemaVersion: 3, kind: 'BrainEpisode', hash: first.episode });
    const path = join(cwd, 'checkpoint.json');
    await writeFile(path, exported.stdout);
    const branch = await ask({
      prompt: 'what is the budget?',
      answer: '100 dollars',
      storeHome: tempDir('bhrain-refs-other-'),
      extra: ['--on-episode', `@${path}`],
    });
    expect(branch.code).toBe(0);
    expect(sentText(1)).toContain('checkpoint: budget is 100 dollars');
  });

  it('refs: a tampered exported file is exit 2, naming the file and what did not verify; the model is never called', async () => {
    const plan = await ask({ prompt: 'plan: deploy on friday', answer: 'friday it is' });
    const exported = await runBhrain({ args: ['export', plan.series!], cwd, env: envIn(home) });
    await writeFile(join(cwd, 'plan.json'), exported.stdout.replace('friday it is', 'monday it is'));
    const requestsBefore = standin().requests.length;
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--on-series', '@plan.json', 'when?'],
      cwd,
      env: envIn(tempDir('bhrain-refs-other-')),
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(
        `--on-series @plan.json: ${join(cwd, 'plan.json')} did not verify and will not be used \\(corrupt exchange: its content hashes to [0-9a-f]{64} but it claims [0-9a-f]{64}; the ref was altered or damaged\\)`,
      ),
    );
    expect(standin().requests.length).toBe(requestsBefore);
  });

  it('refs: @file that is missing, a directory, or of the other kind is exit 2 saying what to pass', async () => {
    const first = await ask({ prompt: 'hello', answer: 'hi' });
    await writeFile(join(cwd, 'episode.json'), (await runBhrain({ args: ['export', first.episode!], cwd, env: envIn(home) })).stdout);
    await mkdir(join(cwd, 'adir'));
    const cases: Array<[string[], string]> = [
      [['--on-series', '@missing.json'], `--on-series @missing.json: there is no file ${join(cwd, 'missing.json')}`],
      [['--on-episode', '@adir'], `--on-episode @adir: ${join(cwd, 'adir')} is a directory`],
      [['--on-series', '@episode.json'], `holds a BrainEpisode, not a BrainSeries; pass it with --on-episode @episode.json`],
    ];
    for (const [flags, message] of cases) {
      const run = await runBhrain({ args: ['ask', '--atom', 'qwen', ...flags, 'go on'], cwd, env: envIn(home) });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });

  it('refs: export of an unknown or malformed ref is exit 2 on stderr, with nothing on stdout', async () => {
    const cases: Array<[string, RegExp]> = [
      ['0123456789abcdef', /^bhrain export: no series or episode 0123456789abcdef in the ref store at .*\/refs/],
      // neither a ref nor a run id: both are named
      ['plan.json', /^bhrain export: no recorded run matches 'plan\.json'; `bhrain runs` lists .*; a ref is the hex hash/],
    ];
    for (const [ref, message] of cases) {
      const run = await runBhrain({ args: ['export', ref], cwd, env: envIn(home) });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
    }
  });

  it('refs: export of a schemaVersion 1 ref writes it as schemaVersion 3, with the notice on stderr', async () => {
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const exchangeHash = sha('q\na');
    const oldHash = sha(exchangeHash);
    await mkdir(join(home, 'refs', 'episodes'), { recursive: true });
    await writeFile(
      join(home, 'refs', 'episodes', `${oldHash}.json`),
      JSON.stringify({
        schemaVersion: 1,
        kind: 'BrainEpisode',
        hash: oldHash,
        exid: null,
        exchanges: [{ hash: exchangeHash, input: 'q', output: 'a', exid: null }],
      }),
    );
    const run = await runBhrain({ args: ['export', oldHash], cwd, env: envIn(home) });
    expect(run.code).toBe(0);
    const file = JSON.parse(run.stdout);
    expect(file).toMatchObject({ schemaVersion: 3, kind: 'BrainEpisode', exchanges: [{ input: 'q', output: 'a' }] });
    expect(file.hash).not.toBe(oldHash);
    expect(run.stderr).toBe(
      `warning: the episode ${oldHash} was saved by an older bhrain (schemaVersion 1, whose hashes did not cover every field unambiguously): it verified under that version's rule and is read as schemaVersion 3, where its hash is ${file.hash}; refs printed from now on follow the new rule\n`,
    );
  });
});

// resume in one word (--continue, --resume), proved through the built CLI against the stand-in
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-resume-home-');
  cwd = tempDir('bhrain-resume-cwd-');
});
const env = () => genCliEnv({ standin: standin(), home });
const sentText = (index: number) => JSON.stringify(standin().requests[index].body);

/** one run with --output json: its id (from its record), its series, its exit code and stderr */
const run = async (input: { skill?: 'ask' | 'act'; prompt: string; answer: string; extra?: string[]; in?: string }) => {
  standin().script({ text: input.answer });
  const skillArgs = input.skill === 'act' ? ['act', '--sandbox', 'off'] : ['ask'];
  const result = await runBhrain({
    args: [...skillArgs, '--atom', 'qwen', '--output', 'json', ...(input.extra ?? []), input.prompt],
    cwd: input.in ?? cwd,
    env: env(),
  });
  const json = result.stdout ? JSON.parse(result.stdout) : null;
  return {
    ...result,
    json,
    id: json?.record ? basename(json.record as string) : undefined,
    series: json?.series?.hash as string | undefined,
  };
};

/** a run that fails before any model request: exit 2, nothing on the wire */
const refused = async (args: string[], where = cwd) => {
  const before = standin().requests.length;
  const result = await runBhrain({ args: ['ask', '--atom', 'qwen', ...args, 'go on'], cwd: where, env: env() });
  expect(result.code).toBe(2);
  expect(result.stderr).not.toMatch(/unexpected failure/);
  expect(standin().requests.length).toBe(before);
  return result;
};

describe('resume: --continue and --resume continue a recorded run', () => {
  it('resume: run 2 with --continue sees run 1; run 3 with --resume <prefix of run 1> continues run 1, not run 2', async () => {
    const first = await run({ prompt: 'the codename is HERON', answer: 'Noted: HERON.' });
    expect(first.code).toBe(0);
    expect(first.id).toMatch(/^\d{4}-/);

    // act continues the plan ask made, in one word
    const second = await run({ skill: 'act', prompt: 'now rename it to OSPREY', answer: 'Renamed to OSPREY.', extra: ['--continue'] });
    expect(second.code).toBe(0);
    expect(sentText(1)).toContain('the codename is HERON');
    expect(sentText(1)).toContain('Noted: HERON.');
    expect(second.id).not.toBe(first.id);

    // a prefix of run 1's id: run 1's series, without run 2's turn, although run 2 is newer and in the same directory
    const third = await run({ prompt: 'what is the codename?', answer: 'HERON', extra: ['--resume', first.id!.slice(0, -3)] });
    expect(third.code).toBe(0);
    expect(sentText(2)).toContain('the codename is HERON');
    expect(sentText(2)).toContain('Noted: HERON.');
    expect(sentText(2)).not.toContain('OSPREY');

    // the series each run saved grew from run 1's: run 2's and run 3's are different branches of it
    const exported = async (hash: string) =>
      JSON.parse((await runBhrain({ args: ['export', hash], cwd, env: env() })).stdout) as {
        episodes: Array<{ exchanges: Array<{ input: string }> }>;
      };
    const inputsOf = async (hash: string) => (await exported(hash)).episodes.flatMap((episode) => episode.exchanges.map((x) => x.input));
    const thirdInputs = await inputsOf(third.series!);
    expect(thirdInputs.some((input) => input.includes('the codename is HERON'))).toBe(true);
    expect(thirdInputs.some((input) => input.includes('OSPREY'))).toBe(false);
    expect((await inputsOf(second.series!)).some((input) => input.includes('OSPREY'))).toBe(true);

    // --continue now takes the newest run here: run 3, whose series holds run 1's turn and not run 2's
    const fourth = await run({ prompt: 'and now?', answer: 'still HERON', extra: ['--continue'] });
    expect(fourth.code).toBe(0);
    expect(sentText(3)).toContain('what is the codename?');
    expect(sentText(3)).not.toContain('OSPREY');
  });

  it('resume: --continue from another directory does not pick a run of a different cwd; a symlink to the directory does (real path)', async () => {
    const first = await run({ prompt: 'the codename is HERON', answer: 'Noted: HERON.' });
    expect(first.code).toBe(0);
    const elsewhere = tempDir('bhrain-resume-other-');
    // a subdirectory of the run's cwd is another directory too
    const below = join(cwd, 'sub');
    await mkdir(below);
    for (const where of [elsewhere, below]) {
      const result = await refused(['--continue'], where);
      expect(result.stderr).toContain('--continue: nothing to continue: no run recorded in');
    }

    const link = join(elsewhere, 'link-to-cwd');
    await symlink(cwd, link);
    const viaLink = await run({ prompt: 'what is the codename?', answer: 'HERON', extra: ['--continue'], in: link });
    expect(viaLink.code).toBe(0);
    expect(sentText(1)).toContain('the codename is HERON');
  });

  it('resume: an ambiguous --resume prefix is exit 2 listing the candidates; an unknown id is exit 2', async () => {
    const first = await run({ prompt: 'one', answer: 'ok 1' });
    const second = await run({ prompt: 'two', answer: 'ok 2' });
    expect([first.code, second.code]).toEqual([0, 0]);
    // both ids start with the year
    const ambiguous = await refused(['--resume', first.id!.slice(0, 4)]);
    expect(ambiguous.stderr).toContain(`--resume ${first.id!.slice(0, 4)}: ambiguous: 2 runs match '${first.id!.slice(0, 4)}'`);
    expect(ambiguous.stderr).toContain(first.id);
    expect(ambiguous.stderr).toContain(second.id);

    const unknown = await refused(['--resume', '1999-01-01T00-00-00-000Z-abcdef']);
    expect(unknown.stderr).toContain("--resume 1999-01-01T00-00-00-000Z-abcdef: no recorded run matches '1999-01-01T00-00-00-000Z-abcdef'");
    expect(unknown.stderr).toContain('bhrain runs');
  });

  it('resume: with an empty store, --continue and --resume are exit 2 saying how to carry a series across CI jobs', async () => {
    for (const flags of [['--continue'], ['--resume', '2026']]) {
      const result = await refused(flags);
      expect(result.stderr).toContain('In a fresh CI job the store is empty');
      expect(result.stderr).toContain('bhrain export <series hash> > series.json');
      expect(result.stderr).toContain('--on-series @series.json');
      expect(result.stderr).toContain(join(home, 'runs'));
    }
  });

  it('resume: a --no-record run leaves nothing to --continue; an unfinished record is skipped by --continue and refused by --resume', async () => {
    const unrecorded = await run({ prompt: 'not kept', answer: 'ok', extra: ['--no-record'] });
    expect(unrecorded.code).toBe(0);
    const none = await refused(['--continue']);
    expect(none.stderr).toContain('a run with --no-record or --record-dir leaves none there');

    const first = await run({ prompt: 'the codename is HERON', answer: 'Noted: HERON.' });
    expect(first.code).toBe(0);
    // a newer run in the same directory that never ended (killed, or still running): its meta.json has no refs
    const meta = JSON.parse(await readFile(join(home, 'runs', first.id!, 'meta.json'), 'utf8'));
    const unfinishedId = '2999-01-01T00-00-00-000Z-abcdef';
    await mkdir(join(home, 'runs', unfinishedId), { recursive: true });
    await writeFile(
      join(home, 'runs', unfinishedId, 'meta.json'),
      JSON.stringify({ ...meta, id: unfinishedId, startedAt: '2999-01-01T00:00:00.000Z', endedAt: null, termination: null, refs: null }),
    );
    const continued = await run({ prompt: 'what is the codename?', answer: 'HERON', extra: ['--continue'] });
    expect(continued.code).toBe(0);
    expect(sentText(2)).toContain('the codename is HERON');

    const resumed = await refused(['--resume', unfinishedId]);
    expect(resumed.stderr).toContain(`the run ${unfinishedId} has not finished`);
  });

  it('resume: a damaged series ref is exit 2 through --continue and --resume, as through --on-series, and never sent', async () => {
    const first = await run({ prompt: 'the codename is HERON', answer: 'Noted: HERON.' });
    expect(first.code).toBe(0);
    const path = join(home, 'refs', 'series', `${first.series}.json`);
    const stored = JSON.parse(await readFile(path, 'utf8'));
    stored.episodes[0].exchanges[0].output = 'Noted: SPARROW.';
    await writeFile(path, JSON.stringify(stored));
    for (const flags of [['--continue'], ['--resume', first.id!], ['--on-series', first.series!]]) {
      const result = await refused(flags);
      expect(result.stderr).toContain(`the series ${first.series} in the ref store is corrupt and will not be used`);
    }
    const viaContinue = await refused(['--continue']);
    expect(viaContinue.stderr).toContain(`--continue: the series ${first.series} of run ${first.id}`);
  });

  it('resume: --continue with --on-series, --on-episode or --resume, and --resume with a ref flag, are usage errors (exit 2)', async () => {
    const first = await run({ prompt: 'one', answer: 'ok' });
    expect(first.code).toBe(0);
    for (const flags of [
      ['--continue', '--on-series', first.series!],
      ['--continue', '--on-episode', first.json.episode.hash],
      ['--continue', '--resume', first.id!],
      ['--resume', first.id!, '--on-series', first.series!],
      ['--resume', first.id!, '--on-episode', first.json.episode.hash],
    ]) {
      const result = await refused(flags);
      expect(result.stderr).toMatch(/give one of --\S+, --\S+, not both/);
    }
    // an empty --resume is refused too, not read as "any run"
    const empty = await refused(['--resume', '']);
    expect(empty.stderr).toContain('give a run id');
  });
});

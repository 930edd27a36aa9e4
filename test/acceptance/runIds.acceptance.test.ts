// runs you can name: the runId of the JSON result, a run found by the start or the end of its id, the runs a failed
// start leaves no record of, and the failed runs --continue passes by; all through the built CLI against the stand-in
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import type { StandinTurn } from '#standin/standin.js';
import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';
import { oneValidObject } from './outputSchema.js';
import { genCliEnv, runBhrain } from './runCli.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(() => {
  home = tempDir('bhrain-runids-home-');
  cwd = tempDir('bhrain-runids-cwd-');
});
const env = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);
const bhrain = (args: string[], overrides: Record<string, string | undefined> = {}) => runBhrain({ args, cwd, env: env(overrides) });
const sentText = (index: number) => JSON.stringify(standin().requests[index].body);

/** one `ask` with --output json that the stand-in answers with these turns: its exit code, its result object, its stderr */
const ask = async (prompt: string, turns: StandinTurn[], extra: string[] = [], overrides: Record<string, string | undefined> = {}) => {
  standin().script(...turns);
  const run = await bhrain(['ask', '--atom', 'claude/haiku', '--output', 'json', ...extra, prompt], overrides);
  return { ...run, json: oneValidObject(run.stdout) };
};

describe('runs you can name: runId, and a run found by the start or the end of its id', () => {
  it('runId in the JSON result (and the last stream-json event) is the name of the record directory, valid against the published schema', async () => {
    const run = await ask('the codename is HERON', [{ text: 'Noted: HERON.' }]);
    expect(run.code, run.stderr).toBe(0);
    const [id] = await readdir(join(home, 'runs'));
    expect(run.json.runId).toBe(id);
    expect(run.json.record).toBe(join(home, 'runs', id));
    expect(JSON.parse(await readFile(join(home, 'runs', id, 'meta.json'), 'utf8')).id).toBe(id);

    standin().script({ text: 'streamed' });
    const streamed = await bhrain(['ask', '--atom', 'claude/haiku', '--output', 'stream-json', 'stream it']);
    const last = JSON.parse(streamed.stdout.trimEnd().split('\n').at(-1)!);
    expect(last.type).toBe('result');
    expect(last.runId).toBe(basename(last.record));
    oneValidObject(`${JSON.stringify(last)}\n`);
  });

  it('runId is null with --no-record, and with --record-dir the id that record’s meta.json holds', async () => {
    const unrecorded = await ask('not kept', [{ text: 'ok' }], ['--no-record']);
    expect(unrecorded.json).toMatchObject({ exitCode: 0, runId: null, record: null });

    const dir = join(tempDir('bhrain-runids-artifacts-'), 'record');
    const elsewhere = await ask('kept elsewhere', [{ text: 'ok' }], ['--record-dir', dir]);
    expect(elsewhere.json.record).toBe(dir);
    expect(elsewhere.json.runId).toBe(JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')).id);
  });

  it('show finds a run by the end of its id (the 6 hex digits) and by its start; export and --resume take the end as show does', async () => {
    const first = await ask('the codename is HERON', [{ text: 'Noted: HERON.' }]);
    const id = first.json.runId as string;
    const end = id.slice(-6);

    const bySuffix = await bhrain(['show', end, '-o', 'json']);
    expect(bySuffix.code, bySuffix.stderr).toBe(0);
    expect(JSON.parse(bySuffix.stdout)).toMatchObject({ source: 'run', id, output: 'Noted: HERON.', task: 'the codename is HERON' });
    const byPrefix = await bhrain(['show', id.slice(0, 16)]);
    expect(byPrefix.code, byPrefix.stderr).toBe(0);
    expect(byPrefix.stdout.startsWith('Noted: HERON.\n')).toBe(true);

    const exported = await bhrain(['export', end]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout).hash).toBe(first.json.series.hash);

    const resumed = await ask('what is the codename?', [{ text: 'HERON' }], ['--resume', end]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(sentText(1)).toContain('the codename is HERON');
  });

  it('a start two runs share is exit 2 listing each run (id, task, directory); a mistyped end names the run it is nearest to', async () => {
    const first = await ask('plan the migration\nin three steps', [{ text: 'a plan' }]);
    const second = await ask('write the release notes', [{ text: 'notes' }]);
    const [older, newer] = [first.json.runId as string, second.json.runId as string];

    // both ids start with the year
    const ambiguous = await bhrain(['show', older.slice(0, 4)]);
    expect(ambiguous).toMatchObject({ code: 2, stdout: '' });
    expect(ambiguous.stderr).toBe(
      [
        `bhrain show: ambiguous: 2 runs match '${older.slice(0, 4)}'; give more of the id of the one you mean:`,
        `  ${newer}  write the release notes  (in ${cwd})`,
        `  ${older}  plan the migration  (in ${cwd})`,
        '',
      ].join('\n'),
    );
    const viaResume = await bhrain(['ask', '--atom', 'claude/haiku', '--resume', older.slice(0, 4), 'go on']);
    expect(viaResume.code).toBe(2);
    expect(viaResume.stderr).toContain(`--resume ${older.slice(0, 4)}: ambiguous: 2 runs match '${older.slice(0, 4)}'`);

    // the last hex digit mistyped: one edit from the end of the older id
    const typo = `${older.slice(-6, -1)}${older.at(-1) === '0' ? '1' : '0'}`;
    const misspelt = await bhrain(['show', typo]);
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain(`bhrain show: no recorded run matches '${typo}' (did you mean ${older}?)`);
    expect(standin().requests).toHaveLength(2);
  });
});

describe('a run that never got an answer from the model leaves no record', () => {
  it('without ANTHROPIC_API_KEY: exit 4, runId and record null, no record under runs/, and `bhrain runs` lists nothing', async () => {
    const run = await ask('hello', [], [], { ANTHROPIC_API_KEY: undefined });
    expect(run.code).toBe(4);
    expect(run.json).toMatchObject({ termination: 'error', runId: null, record: null, error: { code: 'AUTH_FAILED' } });
    expect(run.json.error.message).toContain('no API key for claude/haiku');
    expect(run.stderr).not.toContain('record:');
    expect(standin().requests).toHaveLength(0);
    expect(await readdir(join(home, 'runs')).catch(() => [])).toEqual([]);

    const runs = await bhrain(['runs']);
    expect(runs).toMatchObject({ code: 0, stdout: '' });
    expect(JSON.parse((await bhrain(['runs', '-o', 'json'])).stdout).runs).toEqual([]);
  });

  it('a first request the supplier refuses leaves no record either; a run that failed after an answer keeps its record, as error', async () => {
    const refused = await ask('hello', [{ error: { status: 400, message: 'the request is malformed' } }]);
    expect(refused.code).toBe(4);
    expect(refused.json).toMatchObject({ termination: 'error', runId: null, record: null });
    expect(await readdir(join(home, 'runs'))).toEqual([]);

    const halfway = await ask('list the files', [
      { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] },
      { error: { status: 400, message: 'the request is malformed' } },
    ]);
    expect(halfway.code).toBe(4);
    expect(halfway.json).toMatchObject({ termination: 'error', metrics: { iterations: 1 } });
    expect(await readdir(join(home, 'runs'))).toEqual([halfway.json.runId]);
  });
});

describe('--continue passes failed runs by', () => {
  it('--continue after a run that failed halfway continues the good run before it; --resume <the failed one> still takes it', async () => {
    const good = await ask('the codename is HERON', [{ text: 'Noted: HERON.' }]);
    expect(good.code).toBe(0);
    // a missing key leaves no record; a failure after an answer leaves one, whose last exchange is the error
    expect((await ask('rename it to OSPREY', [], [], { ANTHROPIC_API_KEY: undefined })).code).toBe(4);
    const failed = await ask('rename it to SPARROW', [
      { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] },
      { error: { status: 400, message: 'the request is malformed' } },
    ]);
    expect(failed.code).toBe(4);

    const continued = await ask('what is the codename?', [{ text: 'HERON' }], ['--continue']);
    expect(continued.code, continued.stderr).toBe(0);
    const sent = sentText(standin().requests.length - 1);
    expect(sent).toContain('the codename is HERON');
    expect(sent).not.toContain('SPARROW');
    expect(sent).not.toContain('OSPREY');
    expect(sent).not.toContain('this exchange ended with an error');

    const resumed = await ask('try again', [{ text: 'renamed' }], ['--resume', (failed.json.runId as string).slice(-6)]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(sentText(standin().requests.length - 1)).toContain('rename it to SPARROW');
  });

  it('--continue with only a failed run here is exit 2 naming the --resume that takes it, before any request', async () => {
    const failed = await ask('list the files', [
      { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] },
      { error: { status: 400, message: 'the request is malformed' } },
    ]);
    const before = standin().requests.length;
    const run = await bhrain(['ask', '--atom', 'claude/haiku', '--continue', 'go on']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--continue: nothing to continue: no run recorded in ${cwd} ended without error`);
    expect(run.stderr).toContain(`1 failed, which --continue passes by: \`--resume ${failed.json.runId}\` continues the newest of them`);
    expect(standin().requests.length).toBe(before);
  });
});

describe('bhrain runs names each run by what it was and where it ran', () => {
  it('lists id, start, skill, termination, directory and the task; --here only the runs of this directory', async () => {
    const here = await ask('where are the tests?\nlist them all', [{ text: 'in test/' }]);
    const other = tempDir('bhrain-runids-other-');
    standin().script({ text: 'elsewhere' });
    expect((await runBhrain({ args: ['ask', '--atom', 'claude/haiku', 'what is there?'], cwd: other, env: env() })).code).toBe(0);

    const all = await bhrain(['runs']);
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['ID', 'STARTED', 'SKILL', 'TERMINATION', 'DIRECTORY', 'TASK']);
    expect(lines[1]).toMatch(new RegExp(`^\\S+\\s+\\S+ \\S+\\s+ask\\s+complete\\s+${other}\\s+what is there\\?$`));
    expect(lines[2]).toMatch(new RegExp(`^${here.json.runId}\\s+\\S+ \\S+\\s+ask\\s+complete\\s+${cwd}\\s+where are the tests\\?$`));

    const mine = JSON.parse((await bhrain(['runs', '--here', '-o', 'json'])).stdout);
    expect(mine.runs.map((run: { id: string }) => run.id)).toEqual([here.json.runId]);
    expect(mine.runs[0]).toMatchObject({ task: 'where are the tests?', cwd, dir: here.json.record });
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { genRunsCommand } from './genRunsCommand.js';
import { openRunRecord } from './runRecord.js';
import { tempDir } from '#test-helpers/fs.js';

/** .what = runs `bhrain runs <args>` in-process against a home, collecting what it writes and its exit code */
const runRuns = async (home: string, args: string[]) => {
  let stdout = '';
  let stderr = '';
  let code: number | null = null;
  const command = genRunsCommand({
    home,
    stdout: { write: (text) => (stdout += text) },
    stderr: { write: (text) => (stderr += text) },
    setExitCode: (value) => (code = value),
  });
  await command
    .exitOverride()
    .configureOutput({ writeErr: (text) => (stderr += text) })
    .parseAsync(args, { from: 'user' });
  return { stdout, stderr, code };
};

/** .what = records a finished run that started at `at` */
const recordRun = async (
  home: string,
  at: Date,
  input: { skill: string; atom: string; output: string; usd: number | null; series: string },
) => {
  const record = await openRunRecord(
    { home, recordDir: undefined, skill: input.skill, atom: input.atom, cwd: '/work/repo' },
    { now: () => at },
  );
  await record.finish({
    prompt: 'task',
    output: input.output,
    termination: 'complete',
    refs: { episode: `e${input.series.slice(1)}`, series: input.series },
    metrics: { iterations: 1, tokens: { input: 1, output: 1, cache: { get: 0, set: 0 } }, cost: { usd: input.usd }, elapsedMs: 1 },
    transcript: [],
    redact: (text) => text,
  });
  return record.id;
};

describe('bhrain runs', () => {
  const at = (minute: number) => new Date(Date.UTC(2025, 5, 1, 9, minute, 0));

  it('records: lists recorded runs newest first: id, time, skill, atom, termination, refs, cost', async () => {
    const home = tempDir('bhrain-home-');
    const first = await recordRun(home, at(0), {
      skill: 'ask',
      atom: 'claude/haiku',
      output: 'a',
      usd: 0.0012,
      series: `1${'a'.repeat(63)}`,
    });
    const second = await recordRun(home, at(5), {
      skill: 'act',
      atom: 'qwen/qwen-plus',
      output: 'b',
      usd: null,
      series: `2${'b'.repeat(63)}`,
    });
    const unfinished = await openRunRecord(
      { home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: '/work/repo' },
      { now: () => at(9) },
    );

    const run = await runRuns(home, []);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0].split(/\s+/)).toEqual(['ID', 'STARTED', 'SKILL', 'ATOM', 'TERMINATION', 'SERIES', 'EPISODE', 'COST']);
    expect(lines[1].split(/\s+/)).toEqual([
      unfinished.id,
      expect.stringMatching(/^2025-06-0[12]$/),
      expect.stringMatching(/^\d\d:\d\d:00$/),
      'act',
      'qwen',
      'unfinished',
      '-',
      '-',
      '-',
    ]);
    expect(lines[2].split(/\s+/)).toEqual([
      second,
      expect.any(String),
      expect.any(String),
      'act',
      'qwen/qwen-plus',
      'complete',
      `2${'b'.repeat(11)}`,
      `e${'b'.repeat(11)}`,
      '-',
    ]);
    expect(lines[3].split(/\s+/)).toEqual([
      first,
      expect.any(String),
      expect.any(String),
      'ask',
      'claude/haiku',
      'complete',
      `1${'a'.repeat(11)}`,
      `e${'a'.repeat(11)}`,
      '$0.0012',
    ]);
    // columns line up: each row starts its termination where the header does
    expect(new Set(lines.map((line) => line.search(/TERMINATION|unfinished|complete/))).size).toBe(1);
  });

  it('records: --limit and --output json: one object with the runs, newest first', async () => {
    const home = tempDir('bhrain-home-');
    for (let minute = 0; minute < 3; minute++)
      await recordRun(home, at(minute), {
        skill: 'ask',
        atom: 'qwen',
        output: `answer ${minute}`,
        usd: 0.001,
        series: `${minute}${'c'.repeat(63)}`,
      });
    const run = await runRuns(home, ['--limit', '2', '-o', 'json']);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.schemaVersion).toBe(1);
    expect(json.runs.map((each: { refs: { series: string } }) => each.refs.series[0])).toEqual(['2', '1']);
    expect(json.runs[0]).toMatchObject({
      skill: 'ask',
      atom: 'qwen',
      termination: 'complete',
      dir: join(home, 'runs', json.runs[0].id),
      metrics: { cost: { usd: 0.001 } },
    });
    expect((await runRuns(home, ['-n', '1'])).stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('records: no runs yet says where they would be, exit 0; a damaged record is skipped with the reason', async () => {
    const home = tempDir('bhrain-home-');
    expect(await runRuns(home, [])).toEqual({ code: 0, stdout: '', stderr: `no runs recorded in ${join(home, 'runs')}\n` });
    expect(JSON.parse((await runRuns(home, ['-o', 'json'])).stdout)).toEqual({ schemaVersion: 1, runs: [] });

    const good = await recordRun(home, at(0), { skill: 'ask', atom: 'qwen', output: 'fine', usd: 0, series: 'd'.repeat(64) });
    const damaged = join(home, 'runs', '2025-06-01T09-01-00-000Z-000000');
    await mkdir(damaged);
    await writeFile(join(damaged, 'meta.json'), '{"schemaVersion": 99}');
    const run = await runRuns(home, []);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(good);
    expect(run.stderr).toBe(
      `bhrain runs: skipped ${damaged}: the run record ${join(damaged, 'meta.json')} has schemaVersion 99; this bhrain reads version 1: read it with the bhrain that wrote it\n`,
    );
  });

  it('records: a bad --limit or --output is exit 2 naming the flag (with -o json, still one JSON object)', async () => {
    const home = tempDir('bhrain-home-');
    expect(await runRuns(home, ['--limit', '0'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "bhrain runs: --limit must be a whole number of at least 1, got '0'\n",
    });
    expect(await runRuns(home, ['-o', 'yaml'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "bhrain runs: unknown --output 'yaml': choose text or json\n",
    });
    const json = await runRuns(home, ['--limit', 'many', '-o', 'json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      exitCode: 2,
      error: { code: 'BAD_REQUEST', message: "--limit must be a whole number of at least 1, got 'many'" },
    });
  });
});

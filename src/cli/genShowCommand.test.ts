import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { genBrainEpisode } from '../core/contract/BrainEpisode.js';
import { genBrainExchange } from '../core/contract/BrainExchange.js';
import { genBrainSeries } from '../core/contract/BrainSeries.js';
import { genBrainRefStore } from '../core/continuation/genBrainRefStore.js';
import { genShowCommand } from './genShowCommand.js';
import { openRunRecord } from './runRecord.js';
import { tempDir } from '#test-helpers/fs.js';

/** .what = runs `bhrain show <args>` in-process against a home, collecting what it writes and its exit code */
const runShow = async (home: string, args: string[], cwd = home) => {
  let stdout = '';
  let stderr = '';
  let code: number | null = null;
  const command = genShowCommand({
    home,
    cwd,
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

const transcript = [
  { role: 'user', content: 'what is here?' },
  { role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'toolu_1', name: 'glob', input: { pattern: '*' } }] },
  { role: 'tool', toolCallId: 'toolu_1', toolName: 'glob', content: 'readme.md\nsrc/', isError: false },
  { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_2', name: 'read', input: { path: 'nope.md' } }] },
  { role: 'tool', toolCallId: 'toolu_2', toolName: 'read', content: 'file not found: nope.md', isError: true },
  { role: 'assistant', content: 'A readme and a src folder.', toolCalls: [] },
];

/** .what = records a finished run with the transcript above, at `at`, with the given refs */
const recordRun = async (
  home: string,
  at: Date,
  refs: { episode: string; series: string },
  options: { recordDir?: string; cwd?: string } = {},
) => {
  const record = await openRunRecord(
    { home, recordDir: options.recordDir, skill: 'ask', atom: 'claude/haiku', cwd: options.cwd ?? '/work/repo' },
    { now: () => at },
  );
  await record.finish({
    prompt: 'what is here?',
    output: 'A readme and a src folder.',
    termination: 'complete',
    refs,
    metrics: { iterations: 3, tokens: { input: 100, output: 20, cache: { get: 0, set: 0 } }, cost: { usd: 0.0021 }, elapsedMs: 40 },
    transcript,
    redact: (text) => text,
  });
  return record;
};

const EXPECTED_TRANSCRIPT = `── user ──
what is here?

── assistant ──
Let me look.
→ glob {"pattern":"*"}

── glob result ──
readme.md
src/

── assistant ──
→ read {"path":"nope.md"}

── read result (error) ──
file not found: nope.md

── assistant ──
A readme and a src folder.
`;

describe('bhrain show', () => {
  const refs = { episode: `e1${'0'.repeat(62)}`, series: `5e${'0'.repeat(62)}` };

  it("records: show <run id> prints the run's answer, then its transcript (roles, tool calls, results)", async () => {
    const home = tempDir('bhrain-home-');
    const record = await recordRun(home, new Date('2025-06-01T09:00:00.000Z'), refs);
    const run = await runShow(home, [record.id]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      `A readme and a src folder.\n\n══ run ${record.id}: ask with claude/haiku, complete, 3 iterations, $0.0021, started 2025-06-01T09:00:00.000Z, in /work/repo\nrecord: ${record.dir}\nepisode: ${refs.episode}\nseries: ${refs.series}\n\n${EXPECTED_TRANSCRIPT}`,
    );
  });

  it('records: show finds a run by an id prefix, by its series or episode ref (or a prefix), and by its record directory', async () => {
    const home = tempDir('bhrain-home-');
    const record = await recordRun(home, new Date('2025-06-01T09:00:00.000Z'), refs);
    const other = await recordRun(home, new Date('2025-06-02T09:00:00.000Z'), {
      episode: `e2${'0'.repeat(62)}`,
      series: `5f${'0'.repeat(62)}`,
    });
    const cwd = tempDir('bhrain-cwd-');
    const elsewhere = await recordRun(home, new Date('2025-06-03T09:00:00.000Z'), refs, { recordDir: 'out', cwd });
    const idOf = async (args: string[], from = home) => JSON.parse((await runShow(home, [...args, '-o', 'json'], from)).stdout).id;
    expect(await idOf(['2025-06-01T09'])).toBe(record.id);
    expect(await idOf([refs.series])).toBe(record.id);
    expect(await idOf([refs.series.slice(0, 8)])).toBe(record.id);
    expect(await idOf([refs.episode.slice(0, 10)])).toBe(record.id);
    expect(await idOf(['5f000000'])).toBe(other.id);
    expect(await idOf(['./out'], cwd)).toBe(elsewhere.id);
    expect(await idOf([record.dir!])).toBe(record.id);
  });

  it('records: show -o json prints the whole record as one object', async () => {
    const home = tempDir('bhrain-home-');
    const record = await recordRun(home, new Date('2025-06-01T09:00:00.000Z'), refs);
    const run = await runShow(home, [record.id, '--output', 'json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      source: 'run',
      schemaVersion: 1,
      id: record.id,
      dir: record.dir,
      startedAt: '2025-06-01T09:00:00.000Z',
      endedAt: '2025-06-01T09:00:00.000Z',
      skill: 'ask',
      atom: 'claude/haiku',
      cwd: '/work/repo',
      termination: 'complete',
      refs,
      metrics: { iterations: 3, tokens: { input: 100, output: 20, cache: { get: 0, set: 0 } }, cost: { usd: 0.0021 }, elapsedMs: 40 },
      error: null,
      input: 'what is here?',
      output: 'A readme and a src folder.',
      transcript,
    });
  });

  it('records: an unknown run or ref is exit 2 naming it and where runs and refs are looked for', async () => {
    const home = tempDir('bhrain-home-');
    await recordRun(home, new Date('2025-06-01T09:00:00.000Z'), refs);
    const unknown = await runShow(home, ['deadbeef']);
    expect(unknown).toEqual({
      code: 2,
      stdout: '',
      stderr: `bhrain show: no run or ref matches 'deadbeef': \`bhrain runs\` lists the recorded runs (kept in ${join(home, 'runs')}); a ref is the hex hash (at least 8 characters) a run printed as episode: or series:, kept in ${join(home, 'refs')} (set BHRAIN_HOME to the home the run used)\n`,
    });
    expect((await runShow(home, ['last-tuesday'])).stderr).toMatch(/^bhrain show: no run or ref matches 'last-tuesday': /);
    const json = await runShow(home, ['deadbeef', '-o', 'json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      exitCode: 2,
      error: { code: 'BAD_REQUEST', message: expect.stringContaining("no run or ref matches 'deadbeef'") },
    });
    expect(await runShow(home, ['./missing'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^bhrain show: no run record at .*missing: .*meta\.json cannot be read \(ENOENT\)\n$/),
    });
  });

  it('records: a prefix matching two runs is exit 2 listing them; one hash shared by two runs shows the newest', async () => {
    const home = tempDir('bhrain-home-');
    const first = await recordRun(home, new Date('2025-06-01T09:00:00.000Z'), refs);
    const second = await recordRun(home, new Date('2025-06-01T10:00:00.000Z'), {
      episode: `e1${'1'.repeat(62)}`,
      series: `5e000000${'1'.repeat(56)}`,
    });
    const byId = await runShow(home, ['2025-06-01']);
    expect(byId).toEqual({
      code: 2,
      stdout: '',
      stderr: `bhrain show: '2025-06-01' is ambiguous: it matches 2 runs (${second.id}, ${first.id}); give more characters\n`,
    });
    const byRef = await runShow(home, ['5e000000']);
    expect(byRef).toEqual({
      code: 2,
      stdout: '',
      stderr: `bhrain show: '5e000000' is ambiguous: it matches 2 runs (${second.id}, ${first.id}); give more characters\n`,
    });
    expect(JSON.parse((await runShow(home, ['5e0000000', '-o', 'json'])).stdout).id).toBe(first.id);

    // the same question answered the same way: one episode hash, two runs
    const again = await recordRun(home, new Date('2025-06-01T11:00:00.000Z'), refs);
    expect(JSON.parse((await runShow(home, [refs.episode, '-o', 'json'])).stdout).id).toBe(again.id);
  });

  it('records: a ref whose run record is gone prints its last answer and its exchanges from the refs store', async () => {
    const home = tempDir('bhrain-home-');
    const store = genBrainRefStore({ home });
    const first = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'plan the notes file', output: 'PLAN: create notes.md' })] });
    const second = genBrainEpisode({
      exchanges: [...first.exchanges, genBrainExchange({ input: 'now do it', output: 'done: notes.md written' })],
    });
    const series = genBrainSeries({ episodes: [second] });
    await store.saveEpisode(first);
    await store.saveEpisode(second);
    await store.saveSeries(series);
    const record = await recordRun(home, new Date('2025-06-01T09:00:00.000Z'), { episode: second.hash, series: series.hash });
    await rm(record.dir!, { recursive: true });

    const run = await runShow(home, [series.hash.slice(0, 12)]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      `done: notes.md written\n\n══ series ${series.hash}: no run record is left for it (pruned, --no-record, or recorded elsewhere); its exchanges from the refs store:\n\n── user ──\nplan the notes file\n\n── assistant ──\nPLAN: create notes.md\n\n── user ──\nnow do it\n\n── assistant ──\ndone: notes.md written\n`,
    );
    const episode = JSON.parse((await runShow(home, [first.hash, '-o', 'json'])).stdout);
    expect(episode).toMatchObject({
      source: 'refs',
      kind: 'episode',
      hash: first.hash,
      output: 'PLAN: create notes.md',
      episode: { hash: first.hash },
    });
  });
});

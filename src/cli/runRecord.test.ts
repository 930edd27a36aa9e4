import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { BadRequestError } from '../core/contract/errors.js';
import { genSecretRedactor } from '../core/secrets/genSecretRedactor.js';
import { exitCodeOfError } from './exitCodes.js';
import { isRunId, openRunRecord, pruneRunRecords, readRunRecordMeta, RUN_RETENTION, RunRecordWriteError, taskLineOf } from './runRecord.js';
import { exists, tempDir } from '#test-helpers/fs.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
const identity = (text: string) => text;

/** what runSkill hands finish after a run */
const finished = (overrides: Record<string, unknown> = {}) => ({
  prompt: 'what is here?',
  output: 'nothing here',
  termination: 'complete',
  refs: { episode: 'e'.repeat(64), series: 'f'.repeat(64) },
  metrics: { iterations: 2, tokens: { input: 10, output: 5, cache: { get: 0, set: 0 } }, cost: { usd: 0.0012 }, elapsedMs: 30 },
  transcript: [
    { role: 'user', content: 'what is here?' },
    { role: 'assistant', content: 'nothing here', toolCalls: [] },
  ],
  redact: identity,
  ...overrides,
});

/** a run id for a start time, as openRunRecord makes them */
const idAt = (at: Date, suffix = 'abcdef') => `${at.toISOString().replace(/[:.]/g, '-')}-${suffix}`;

describe('openRunRecord', () => {
  it('records: a run is recorded under $BHRAIN_HOME/runs/<id>/ (0700, files 0600), never in the working directory', async () => {
    const home = tempDir('bhrain-runrecord-');
    const cwd = tempDir('bhrain-cwd-');
    const record = await openRunRecord({ home, recordDir: undefined, skill: 'ask', atom: 'claude/haiku', cwd, prompt: 'what is here?' });
    expect(isRunId(record.id)).toBe(true);
    expect(record.dir).toBe(join(home, 'runs', record.id));
    expect(record.spillDir).toBe(join(home, 'runs', record.id, 'spill'));

    // while the run goes on, its meta says so: `bhrain runs` lists it as unfinished
    const running = await readRunRecordMeta(record.dir!);
    expect(running).toMatchObject({
      schemaVersion: 1,
      id: record.id,
      skill: 'ask',
      atom: 'claude/haiku',
      cwd,
      endedAt: null,
      termination: null,
    });

    expect(await record.finish(finished())).toBe(record.dir);
    expect((await readdir(record.dir!)).sort()).toEqual(['input.md', 'meta.json', 'output.md', 'transcript.json']);
    expect(await readFile(join(record.dir!, 'input.md'), 'utf8')).toBe('what is here?');
    expect(await readFile(join(record.dir!, 'output.md'), 'utf8')).toBe('nothing here');
    expect(JSON.parse(await readFile(join(record.dir!, 'transcript.json'), 'utf8'))).toEqual(finished().transcript);
    const meta = await readRunRecordMeta(record.dir!);
    expect(meta).toEqual({
      schemaVersion: 1,
      id: record.id,
      startedAt: running.startedAt,
      endedAt: expect.any(String),
      skill: 'ask',
      atom: 'claude/haiku',
      cwd,
      task: 'what is here?',
      termination: 'complete',
      refs: finished().refs,
      metrics: finished().metrics,
      error: null,
    });
    expect(await modeOf(join(home, 'runs'))).toBe(0o700);
    expect(await modeOf(record.dir!)).toBe(0o700);
    for (const name of await readdir(record.dir!)) expect([name, await modeOf(join(record.dir!, name))]).toEqual([name, 0o600]);
    expect(await readdir(cwd)).toEqual([]);

    // a finished record stays when the run disposes of it
    await record.dispose();
    expect(await exists(join(record.dir!, 'meta.json'))).toBe(true);
  });

  it('records: ids sort by start time and stay unique for runs started in the same millisecond', async () => {
    const home = tempDir('bhrain-runrecord-');
    const at = new Date('2025-03-04T05:06:07.089Z');
    const records = await Promise.all(
      Array.from({ length: 30 }, () =>
        openRunRecord({ home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: home, prompt: 'what is here?' }, { now: () => at }),
      ),
    );
    expect(new Set(records.map((record) => record.id)).size).toBe(30);
    for (const record of records) expect(record.id).toMatch(/^2025-03-04T05-06-07-089Z-[0-9a-f]{6}$/);
    const later = await openRunRecord(
      { home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: home, prompt: 'what is here?' },
      { now: () => new Date(at.getTime() + 1) },
    );
    expect((await readdir(join(home, 'runs'))).sort().at(-1)).toBe(later.id);
  });

  it('records: meta.json names the task by its first line that is not blank, cut to 200 characters; a record written before the field reads it as null', async () => {
    const home = tempDir('bhrain-runrecord-');
    const prompt = `\n  fix   the flaky test\tin ${'src/'.repeat(60)}\nthen run it`;
    const record = await openRunRecord({ home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: home, prompt });
    const { task } = await readRunRecordMeta(record.dir!);
    expect(task).toBe(`fix the flaky test in ${'src/'.repeat(60)}`.slice(0, 199) + '…');
    expect(taskLineOf('one line')).toBe('one line');

    const meta = JSON.parse(await readFile(join(record.dir!, 'meta.json'), 'utf8'));
    delete meta.task;
    await writeFile(join(record.dir!, 'meta.json'), JSON.stringify(meta));
    expect((await readRunRecordMeta(record.dir!)).task).toBeNull();
  });

  it('records: the error of a failed run is kept in meta.json', async () => {
    const home = tempDir('bhrain-runrecord-');
    const record = await openRunRecord({ home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: home, prompt: 'what is here?' });
    await record.finish(
      finished({ termination: 'error', output: '', error: { code: 'SUPPLIER_UNAVAILABLE', message: 'qwen stayed overloaded' } }),
    );
    expect(await readRunRecordMeta(record.dir!)).toMatchObject({
      termination: 'error',
      error: { code: 'SUPPLIER_UNAVAILABLE', message: 'qwen stayed overloaded' },
    });
  });

  it('records: a run that ends without finish (it threw) leaves no unfinished record behind', async () => {
    const home = tempDir('bhrain-runrecord-');
    const record = await openRunRecord({ home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: home, prompt: 'what is here?' });
    await mkdir(record.spillDir, { recursive: true });
    await writeFile(join(record.spillDir, 'bash-1.txt'), 'spilled');
    await record.dispose();
    expect(await readdir(join(home, 'runs'))).toEqual([]);
  });

  it('secrets with quotes, backslashes and newlines in the transcript, prompt, output and error are redacted in every file', async () => {
    const env = { FOO_API_KEY: 'sk-"dq"-7Hq2Lm9Pz4Xw', FOO_TOKEN: 'tk\\bs\\Qr8Vn3Jd6Ty', DB_PASSWORD: "pw'sq\nline2-Mz5Kc8Rb" };
    const redact = genSecretRedactor(env);
    // the pieces of 8 characters or more at either end of a secret, raw and JSON-escaped, that a text holds
    const piecesIn = (text: string): string[] =>
      Object.values(env).flatMap((value) =>
        [value, JSON.stringify(value).slice(1, -1)].flatMap((form) =>
          Array.from({ length: form.length - 7 }, (_, index) => [form.slice(0, index + 8), form.slice(form.length - index - 8)])
            .flat()
            .filter((piece) => text.includes(piece)),
        ),
      );
    const home = tempDir('bhrain-runrecord-');
    const record = await openRunRecord({ home, recordDir: undefined, skill: 'act', atom: 'qwen', cwd: home, prompt: 'what is here?' });
    const dir = await record.finish(
      finished({
        prompt: `use ${env.FOO_API_KEY}`,
        output: `done with ${env.DB_PASSWORD}`,
        transcript: [
          { role: 'user', content: `use ${env.FOO_API_KEY}` },
          { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'bash', input: { command: `printf %s '${env.FOO_TOKEN}'` } }] },
          { role: 'tool', toolCallId: 't1', toolName: 'bash', content: env.DB_PASSWORD, isError: false },
        ],
        error: { code: 'LOOP', message: `failed near ${env.FOO_TOKEN}` },
        redact,
      }),
    );
    const files = await Promise.all((await readdir(dir!)).map(async (name) => ({ name, text: await readFile(join(dir!, name), 'utf8') })));
    expect(files.flatMap((file) => piecesIn(file.text).map((piece) => `${piece} in ${file.name}`))).toEqual([]);
    const written = JSON.parse(files.find((file) => file.name === 'transcript.json')!.text);
    expect(written[1].toolCalls[0].input.command).toBe("printf %s '[redacted:FOO_TOKEN]'");
    expect(written[2].content).toBe('[redacted:DB_PASSWORD]');
    expect((await readRunRecordMeta(dir!)).error!.message).toBe('failed near [redacted:FOO_TOKEN]');
  });
});

// the same describe, continued: openRunRecord's flags and its failures to write
describe('openRunRecord', () => {
  describe('--record-dir', () => {
    it('records: --record-dir puts the record in that directory, resolved from the working directory, and prunes nothing', async () => {
      const home = tempDir('bhrain-runrecord-');
      const cwd = tempDir('bhrain-cwd-');
      const old = idAt(new Date('2020-01-01T00:00:00.000Z'));
      for (let index = 0; index < RUN_RETENTION.keepNewest + 1; index++)
        await mkdir(join(home, 'runs', idAt(new Date(Date.UTC(2020, 0, 1, 0, 0, index)))), { recursive: true });
      const record = await openRunRecord({ home, recordDir: 'artifacts/bhrain', skill: 'ask', atom: 'qwen', cwd, prompt: 'what is here?' });
      expect(record.dir).toBe(join(cwd, 'artifacts', 'bhrain'));
      expect(record.spillDir).toBe(join(cwd, 'artifacts', 'bhrain', 'spill'));
      expect(await record.finish(finished())).toBe(join(cwd, 'artifacts', 'bhrain'));
      expect((await readdir(record.dir!)).sort()).toEqual(['input.md', 'meta.json', 'output.md', 'transcript.json']);
      expect(await readdir(join(home, 'runs'))).toContain(old);
      expect(await readdir(join(home, 'runs'))).toHaveLength(RUN_RETENTION.keepNewest + 1);
    });

    it('records: an empty --record-dir is used; one holding files is refused (exit 2) before the run, nothing overwritten', async () => {
      const cwd = tempDir('bhrain-cwd-');
      await mkdir(join(cwd, 'empty'));
      const used = await openRunRecord({ home: cwd, recordDir: 'empty', skill: 'ask', atom: 'qwen', cwd, prompt: 'what is here?' });
      expect(used.dir).toBe(join(cwd, 'empty'));

      await mkdir(join(cwd, 'full'));
      await writeFile(join(cwd, 'full', 'input.md'), 'mine');
      const refused = openRunRecord({ home: cwd, recordDir: 'full', skill: 'ask', atom: 'qwen', cwd, prompt: 'what is here?' });
      await expect(refused).rejects.toThrow(BadRequestError);
      await expect(refused).rejects.toThrow(
        `--record-dir full: ${join(cwd, 'full')} is not empty (1 entries): give a new or empty directory`,
      );
      expect(await readdir(join(cwd, 'full'))).toEqual(['input.md']);
      expect(await readFile(join(cwd, 'full', 'input.md'), 'utf8')).toBe('mine');
    });

    it('records: a --record-dir that cannot be created is exit 2 naming the flag, before the run', async () => {
      const cwd = tempDir('bhrain-cwd-');
      await writeFile(join(cwd, 'file'), 'x');
      const refused = openRunRecord({ home: cwd, recordDir: 'file/record', skill: 'ask', atom: 'qwen', cwd, prompt: 'what is here?' });
      await expect(refused).rejects.toThrow(BadRequestError);
      await expect(refused).rejects.toThrow(/^--record-dir file\/record: .* cannot be read \(ENOTDIR\): give a new or empty directory$/);
    });

    it('records: an unfinished --record-dir record is cleared on dispose, the directory itself kept', async () => {
      const cwd = tempDir('bhrain-cwd-');
      const record = await openRunRecord({ home: cwd, recordDir: 'out', skill: 'ask', atom: 'qwen', cwd, prompt: 'what is here?' });
      await mkdir(record.spillDir);
      await record.dispose();
      expect(await readdir(join(cwd, 'out'))).toEqual([]);
    });
  });

  describe('--no-record', () => {
    it('records: --no-record writes no record; spill files go to a private temp dir removed when the run ends', async () => {
      const home = tempDir('bhrain-runrecord-');
      const cwd = tempDir('bhrain-cwd-');
      const record = await openRunRecord({ home, recordDir: null, skill: 'ask', atom: 'qwen', cwd, prompt: 'what is here?' });
      expect(record.dir).toBeNull();
      expect(record.spillDir.startsWith(join(tmpdir(), 'bhrain-spill-'))).toBe(true);
      expect(await modeOf(record.spillDir)).toBe(0o700);
      await writeFile(join(record.spillDir, 'read-1.txt'), 'spilled');
      expect(await record.finish(finished())).toBeNull();
      expect(await exists(record.spillDir)).toBe(false);
      expect(await readdir(home)).toEqual([]);
      expect(await readdir(cwd)).toEqual([]);
    });

    it('records: with --no-record, a run that threw removes its temp spill dir on dispose', async () => {
      const record = await openRunRecord({
        home: tempDir('bhrain-runrecord-'),
        recordDir: null,
        skill: 'act',
        atom: 'qwen',
        cwd: tempDir('bhrain-runrecord-'),
        prompt: 'what is here?',
      });
      await writeFile(join(record.spillDir, 'bash-1.txt'), 'spilled');
      await record.dispose();
      await record.dispose();
      expect(await exists(record.spillDir)).toBe(false);
    });
  });

  describe('a record that cannot be written never costs the run or its answer', () => {
    it('BHRAIN_HOME under a regular file: the run starts with a temp spill dir, and finish throws (exit 5) naming the path and cause', async () => {
      const parent = tempDir('bhrain-runrecord-');
      await writeFile(join(parent, 'file'), 'x');
      const home = join(parent, 'file', 'home');
      const record = await openRunRecord({ home, recordDir: undefined, skill: 'ask', atom: 'qwen', cwd: parent, prompt: 'what is here?' });
      expect(record.dir).toBe(join(home, 'runs', record.id));
      expect(record.spillDir.startsWith(join(tmpdir(), 'bhrain-spill-'))).toBe(true);
      const failure = record.finish(finished());
      await expect(failure).rejects.toThrow(RunRecordWriteError);
      await expect(failure).rejects.toThrow(`could not write the run record at ${record.dir} (ENOTDIR)`);
      await expect(failure).rejects.toMatchObject({ code: 'RUN_RECORD_WRITE' });
      expect(exitCodeOfError(await failure.catch((error: unknown) => error))).toBe(5);
      expect(await exists(record.spillDir)).toBe(false);
    });

    it('records: a write that fails midway throws with the path and cause, and the record never claims to have ended', async () => {
      const home = tempDir('bhrain-runrecord-');
      const record = await openRunRecord({ home, recordDir: undefined, skill: 'ask', atom: 'qwen', cwd: home, prompt: 'what is here?' });
      // a directory where transcript.json goes: the rename over it fails, as a full disk would fail a write
      await mkdir(join(record.dir!, 'transcript.json', 'x'), { recursive: true });
      const failure = record.finish(finished());
      await expect(failure).rejects.toThrow(RunRecordWriteError);
      await expect(failure).rejects.toThrow(
        new RegExp(`^could not write the run record at ${record.dir} \\((EISDIR|ENOTEMPTY|EEXIST)\\)$`),
      );
      expect(await readRunRecordMeta(record.dir!)).toMatchObject({ termination: null, endedAt: null });
      // no temp file is left behind
      expect((await readdir(record.dir!)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    });
  });
});

describe('retention', () => {
  const day = 86_400_000;
  const now = new Date('2025-06-30T12:00:00.000Z');
  /** n run directories, one every `stepMs` going back from `from` (newest first), each with a meta.json stand-in */
  const seedRuns = async (runsDir: string, count: number, from: number, stepMs: number) => {
    const ids = Array.from({ length: count }, (_, index) => idAt(new Date(from - index * stepMs), index.toString(16).padStart(6, '0')));
    for (const id of ids) {
      await mkdir(join(runsDir, id, 'spill'), { recursive: true });
      await writeFile(join(runsDir, id, 'meta.json'), '{}');
    }
    return ids;
  };

  it('records: retention keeps the newest 100 runs and every run younger than 7 days, and removes the rest', async () => {
    const runsDir = join(tempDir('bhrain-runrecord-'), 'runs');
    // 150 runs 1 hour apart (all within 7 days) and 50 older ones, 1 day apart from 8 days back
    const young = await seedRuns(runsDir, 150, now.getTime() - 60_000, 3_600_000);
    const old = await seedRuns(runsDir, 50, now.getTime() - 8 * day, day);
    await mkdir(join(runsDir, 'not-a-run'));
    const { removed, failed } = await pruneRunRecords({ runsDir }, { now: () => now });
    expect(failed).toEqual([]);
    expect(removed.sort()).toEqual(old.map((id) => join(runsDir, id)).sort());
    expect((await readdir(runsDir)).sort()).toEqual([...young, 'not-a-run'].sort());
  });

  it('records: a quiet month keeps the newest 100 runs however old they are', async () => {
    const runsDir = join(tempDir('bhrain-runrecord-'), 'runs');
    const ids = await seedRuns(runsDir, 130, now.getTime() - 30 * day, 3_600_000);
    await pruneRunRecords({ runsDir }, { now: () => now });
    expect((await readdir(runsDir)).sort()).toEqual(ids.slice(0, RUN_RETENTION.keepNewest).sort());
  });

  it('records: retention is applied at the start of each run recorded under $BHRAIN_HOME, counting that run', async () => {
    const home = tempDir('bhrain-runrecord-');
    const runsDir = join(home, 'runs');
    const ids = await seedRuns(runsDir, 100, now.getTime() - 10 * day, 60_000);
    const record = await openRunRecord(
      { home, recordDir: undefined, skill: 'ask', atom: 'qwen', cwd: home, prompt: 'what is here?' },
      { now: () => now },
    );
    expect((await readdir(runsDir)).sort()).toEqual([...ids.slice(0, 99), record.id].sort());
  });

  it('records: --no-record prunes nothing', async () => {
    const home = tempDir('bhrain-runrecord-');
    const ids = await seedRuns(join(home, 'runs'), 101, now.getTime() - 10 * day, 60_000);
    const record = await openRunRecord(
      { home, recordDir: null, skill: 'ask', atom: 'qwen', cwd: home, prompt: 'what is here?' },
      { now: () => now },
    );
    await record.dispose();
    expect((await readdir(join(home, 'runs'))).sort()).toEqual(ids.sort());
  });
});

// run records leave the working tree for $BHRAIN_HOME/runs/<id>/; --record-dir, --no-record,
// retention, and the `bhrain runs` / `bhrain show` commands; all through the built CLI against the stand-in
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { exists, tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
beforeEach(async () => {
  home = tempDir('bhrain-home-');
});
const envFor = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);
const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
const RUN_ID = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[0-9a-f]{6}$/;

const git = async (cwd: string, args: string[]) =>
  (
    await promisify(execFile)('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: home },
    })
  ).stdout;

/** a fresh git repo with one committed file of 2,000 lines, large enough that reading it spills to disk */
const genGitRepo = async (): Promise<string> => {
  const repo = tempDir('bhrain-repo-');
  await git(repo, ['init', '-q']);
  await mkdir(join(repo, 'src'));
  await writeFile(
    join(repo, 'src', 'big.txt'),
    Array.from({ length: 2_000 }, (_, index) => `line ${index + 1}: ${'x'.repeat(60)}`).join('\n') + '\n',
  );
  await git(repo, ['add', '.']);
  await git(repo, ['commit', '-qm', 'init']);
  return repo;
};

/** the path of the full output that a truncation notice in the stand-in's request #index told the model about */
const spillPathSent = (index: number): string => {
  const match = /the full output is at (\S+\.txt):/i.exec(JSON.stringify(standin().requests[index].body));
  expect(match, 'a truncation notice with the spill path').not.toBeNull();
  return match![1];
};

describe('$BHRAIN_HOME is hidden from the model, but for the spill files of its own run', () => {
  it('the model pages its spill file in $BHRAIN_HOME with read, and cannot read the record of an earlier run there', async () => {
    const repo = await genGitRepo();
    await mkdir(join(home, 'runs', 'earlier'), { recursive: true });
    await writeFile(join(home, 'runs', 'earlier', 'output.md'), 'what an earlier run answered');
    let spill = '';
    standin().respond = (request) => {
      const sent = JSON.stringify(request.body);
      if (!spill && /the full output is at (\S+\.txt):/i.test(sent)) {
        spill = /the full output is at (\S+\.txt):/i.exec(sent)![1];
        return {
          toolCalls: [
            { name: 'read', input: { path: spill, offset: 1500, limit: 2 } },
            { name: 'read', input: { path: join(home, 'runs', 'earlier', 'output.md') } },
          ],
        };
      }
      return undefined;
    };
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'src/big.txt' } }] }, { text: 'paged' });
    const run = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', '--input', 'page big.txt'], cwd: repo, env: envFor() });
    expect(run.code, run.stderr).toBe(0);
    expect(spill.startsWith(join(home, 'runs'))).toBe(true);
    const results = JSON.stringify(standin().requests[2].body);
    expect(results).toContain('line 1500: x');
    expect(results).toMatch(/Refused to read \S+earlier\/output\.md: it is in \$BHRAIN_HOME/);
    expect(results).not.toContain('what an earlier run answered');
  });
});

describe('run records are kept out of the working tree', () => {
  it('`ask` in a fresh git repo (from a subdirectory) leaves `git status --porcelain --ignored` clean; the record and its spill file are under $BHRAIN_HOME/runs/<id>/', async () => {
    const repo = await genGitRepo();
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'big.txt' } }] }, { text: 'big.txt holds 2000 lines' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude/haiku', '--input', 'how long is big.txt?', '--output', 'json'],
      cwd: join(repo, 'src'),
      env: envFor(),
    });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.output).toBe('big.txt holds 2000 lines');

    expect(await git(repo, ['status', '--porcelain', '--ignored'])).toBe('');

    const [id] = await readdir(join(home, 'runs'));
    expect(id).toMatch(RUN_ID);
    const record = join(home, 'runs', id);
    expect(json.record).toBe(record);
    expect(run.stderr).toContain(`record: ${record}\n`);
    expect((await readdir(record)).sort()).toEqual(['audit.json', 'input.md', 'meta.json', 'output.md', 'spill', 'transcript.json']);
    expect(JSON.parse(await readFile(join(record, 'meta.json'), 'utf8'))).toMatchObject({
      schemaVersion: 1,
      id,
      skill: 'ask',
      atom: 'claude/haiku',
      cwd: join(repo, 'src'),
      termination: 'complete',
      refs: { episode: json.episode.hash, series: json.series.hash },
      metrics: { iterations: 2, cost: { usd: expect.any(Number) } },
    });
    expect(await readFile(join(record, 'output.md'), 'utf8')).toBe('big.txt holds 2000 lines');

    // the model was pointed at the spill file under the run's own directory, readable by its owner only
    const spill = spillPathSent(1);
    expect(spill.startsWith(join(record, 'spill'))).toBe(true);
    expect((await readFile(spill, 'utf8')).split('\n')[1]).toMatch(/^\s*2\s.*line 2: x+$/);
    expect(await modeOf(spill)).toBe(0o600);
    expect(await modeOf(join(record, 'spill'))).toBe(0o700);
    expect(await modeOf(record)).toBe(0o700);
  });

  it('`act` that changes nothing leaves the git checkout clean too', async () => {
    const repo = await genGitRepo();
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'git status --short' } }] }, { text: 'the tree is clean' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--sandbox', 'off', '--input', 'is the tree clean?', '--quiet'],
      cwd: repo,
      env: envFor(),
    });
    expect(run).toMatchObject({ code: 0, stdout: 'the tree is clean\n', stderr: '' });
    expect(await git(repo, ['status', '--porcelain', '--ignored'])).toBe('');
    expect(await readdir(join(home, 'runs'))).toHaveLength(1);
  });

  it('--record-dir <dir> puts the record in that directory, and nothing goes to $BHRAIN_HOME/runs', async () => {
    const cwd = tempDir('bhrain-cwd-');
    const artifacts = join(tempDir('bhrain-artifacts-'), 'bhrain');
    standin().script({ toolCalls: [{ name: 'glob', input: { pattern: '*' } }] }, { text: 'nothing here' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--input', 'what is here?', '--record-dir', artifacts, '--output', 'json'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).record).toBe(artifacts);
    expect((await readdir(artifacts)).sort()).toEqual(['audit.json', 'input.md', 'meta.json', 'output.md', 'transcript.json']);
    expect(await exists(join(home, 'runs'))).toBe(false);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('a --record-dir that holds files is exit 2 naming the flag, before any request is made', async () => {
    const cwd = tempDir('bhrain-cwd-');
    await mkdir(join(cwd, 'out'));
    await writeFile(join(cwd, 'out', 'notes.md'), 'mine');
    standin().script({ text: 'never asked' });
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '--input', 'hi', '--record-dir', 'out'], cwd, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`--record-dir out: ${join(cwd, 'out')} is not empty (1 entries): give a new or empty directory`);
    expect(standin().requests).toHaveLength(0);
    expect(await readdir(join(cwd, 'out'))).toEqual(['notes.md']);
  });

  it('--no-record writes no record; the spill file lived in a private temp dir that is gone when the run ends', async () => {
    const repo = await genGitRepo();
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'src/big.txt' } }] }, { text: 'read it' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--input', 'read src/big.txt', '--no-record', '--output', 'json'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).record).toBeNull();
    expect(run.stderr).not.toContain('record:');
    expect(await exists(join(home, 'runs'))).toBe(false);
    const spill = spillPathSent(1);
    expect(spill.startsWith(join(tmpdir(), 'bhrain-spill-'))).toBe(true);
    expect(await exists(join(spill, '..'))).toBe(false);
    expect(await git(repo, ['status', '--porcelain', '--ignored'])).toBe('');
  });

  it('retention runs at the start of a recorded run: old runs beyond the newest 100 are removed', async () => {
    const old = Array.from(
      { length: 100 },
      (_, index) => `2020-01-01T00-00-${String(Math.floor(index / 10)).padStart(2, '0')}-${String(index % 10).padStart(3, '0')}Z-abcdef`,
    );
    for (const id of old) await mkdir(join(home, 'runs', id), { recursive: true });
    standin().script({ text: 'fresh' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--input', 'hi', '--quiet'],
      cwd: tempDir('bhrain-cwd-'),
      env: envFor(),
    });
    expect(run.code).toBe(0);
    const left = (await readdir(join(home, 'runs'))).sort();
    expect(left).toHaveLength(100);
    expect(left.slice(0, 99)).toEqual(old.slice(1));
    expect(left[99]).toMatch(RUN_ID);
  });
});

describe('bhrain runs and bhrain show', () => {
  it('`bhrain runs` lists runs newest first, and `bhrain show` prints a run by id or ref: the answer, then the transcript', async () => {
    const cwd = tempDir('bhrain-cwd-');
    standin().script({ text: 'first answer' });
    const first = JSON.parse(
      (await runBhrain({ args: ['ask', '--atom', 'qwen/qwen-plus', '--input', 'first?', '--output', 'json'], cwd, env: envFor() })).stdout,
    );
    standin().script({ toolCalls: [{ name: 'glob', input: { pattern: '*.md' } }] }, { text: 'second answer' });
    const second = JSON.parse(
      (
        await runBhrain({
          args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '--input', 'second?', '--output', 'json'],
          cwd,
          env: envFor(),
        })
      ).stdout,
    );

    const runs = await runBhrain({ args: ['runs'], cwd, env: envFor() });
    expect(runs).toMatchObject({ code: 0, stderr: '' });
    const lines = runs.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID\s+STARTED\s+SKILL\s+TERMINATION\s+DIRECTORY\s+TASK$/);
    expect(lines[1]).toMatch(new RegExp(`^${second.runId}\\s+[\\d-]+ [\\d:]+\\s+act\\s+complete\\s+${cwd}\\s+second\\?$`));
    expect(lines[2]).toMatch(new RegExp(`^${first.runId}\\s+[\\d-]+ [\\d:]+\\s+ask\\s+complete\\s+${cwd}\\s+first\\?$`));

    const listed = JSON.parse((await runBhrain({ args: ['runs', '--limit', '1', '--output', 'json'], cwd, env: envFor() })).stdout);
    expect(listed.runs.map((run: { dir: string }) => run.dir)).toEqual([second.record]);

    const byId = await runBhrain({ args: ['show', listed.runs[0].id], cwd, env: envFor() });
    expect(byId.code).toBe(0);
    expect(byId.stdout.startsWith('second answer\n\n══ run ')).toBe(true);
    expect(byId.stdout).toContain('── user ──\nsecond?\n');
    expect(byId.stdout).toContain('→ glob {"pattern":"*.md"}');
    expect(byId.stdout).toMatch(/── glob result ──\n/);
    expect(byId.stdout.endsWith('── assistant ──\nsecond answer\n')).toBe(true);

    const byRef = await runBhrain({ args: ['show', first.series.hash.slice(0, 10), '--output', 'json'], cwd, env: envFor() });
    expect(JSON.parse(byRef.stdout)).toMatchObject({
      source: 'run',
      dir: first.record,
      output: 'first answer',
      input: 'first?',
      refs: { series: first.series.hash },
    });

    // the record is gone (pruned, or another machine's): the refs store still answers
    await rm(first.record, { recursive: true });
    const fromStore = await runBhrain({ args: ['show', first.episode.hash], cwd, env: envFor() });
    expect(fromStore.code).toBe(0);
    expect(fromStore.stdout.startsWith('first answer\n\n══ episode ')).toBe(true);
    expect(fromStore.stdout).toContain('── user ──\nfirst?\n\n── assistant ──\nfirst answer\n');
  });

  it('`bhrain show` of an unknown run or ref is exit 2 naming it', async () => {
    const run = await runBhrain({ args: ['show', 'cafebabe00'], cwd: home, env: envFor() });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^bhrain show: no run or ref matches 'cafebabe00': `bhrain runs` lists the recorded runs/);
    const json = await runBhrain({ args: ['show', 'cafebabe00', '--output', 'json'], cwd: home, env: envFor() });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.message).toContain("no run or ref matches 'cafebabe00'");
  });
});

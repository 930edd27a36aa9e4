import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { exists, tempDir } from '#test-helpers/fs.js';

/** .what = the pids of the host's processes whose command line is exactly `command` */
const findProcesses = async (command: string): Promise<number[]> => {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const lines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
  return pids.filter((_, index) => lines[index].split('\0').join(' ').trim() === command).map(Number);
};

const { standin } = useStandin();
let home: string;
beforeEach(async () => {
  home = tempDir('bhrain-home-');
});
const envFor = (overrides: Record<string, string | undefined> = {}) => genCliEnv({ standin: standin(), home }, overrides);

describe('bin/bhrain, directly', () => {
  it('reads the task from stdin when piped (echo task | bhrain act --atom qwen)', async () => {
    const cwd = tempDir('bhrain-cwd-');
    standin().script({ text: 'done from stdin' });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--quiet'], cwd, env: envFor(), stdin: 'summarize the repo\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('done from stdin\n');
    expect(run.stderr).toBe('');
    expect(JSON.stringify(standin().requests[0].body)).toContain('summarize the repo');
  });

  it('--output json prints one object of the documented shape, and writes the run record', async () => {
    const cwd = tempDir('bhrain-cwd-');
    standin().script({ toolCalls: [{ name: 'glob', input: { pattern: '*' } }] }, { text: 'nothing here' });
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude/sonnet', '--input', 'what is here?', '--output', 'json'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json).toEqual({
      type: 'result',
      schemaVersion: 1,
      skill: 'ask',
      atom: 'claude/sonnet',
      output: 'nothing here',
      termination: 'complete',
      exitCode: 0,
      episode: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      series: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      runId: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[0-9a-f]{6}$/),
      record: expect.stringMatching(new RegExp(`^${home}/runs/`)),
      metrics: {
        iterations: 2,
        tokens: { input: expect.any(Number), output: expect.any(Number), cache: { get: expect.any(Number), set: expect.any(Number) } },
        cost: { usd: expect.any(Number) },
        elapsedMs: expect.any(Number),
      },
      toolCalls: { made: 1, failed: 0, denied: 0, promptedDenied: 0, denials: [] },
      // the end-of-run audit of a run that changed nothing
      audit: expect.objectContaining({
        version: 2,
        files: expect.objectContaining({ created: { items: [], omitted: 0 }, changed: { items: [], omitted: 0 }, complete: true }),
        hidden: { index: { items: [], omitted: 0 }, files: { items: [], omitted: 0 }, unread: null },
        commands: { items: [], omitted: 0 },
      }),
      warnings: [],
      error: null,
    });
    // the record is under the home, never in the working directory; its directory is named after the run's id
    expect(json.record).toBe(join(home, 'runs', json.runId));
    expect(await readdir(cwd)).toEqual([]);
    expect((await readdir(json.record)).sort()).toEqual(['audit.json', 'input.md', 'meta.json', 'output.md', 'transcript.json']);
    expect(JSON.parse(await readFile(join(json.record, 'meta.json'), 'utf8')).refs).toEqual({
      episode: json.episode.hash,
      series: json.series.hash,
    });
    expect(await readFile(join(json.record, 'input.md'), 'utf8')).toBe('what is here?');
  });

  it('continues a series across two processes and from another directory', async () => {
    const planDir = tempDir('bhrain-plan-');
    const doDir = tempDir('bhrain-do-');
    standin().script({ text: 'PLAN: create notes.md with a title' });
    const plan = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--input', 'plan the notes file', '--output', 'json'],
      cwd: planDir,
      env: envFor(),
    });
    const { series } = JSON.parse(plan.stdout);

    standin().script({ toolCalls: [{ name: 'write', input: { path: 'notes.md', content: '# notes\n' } }] }, { text: 'done as planned' });
    const act = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--on-series', series.hash.slice(0, 12), '--input', 'now do it'],
      cwd: doDir,
      env: envFor(),
    });
    expect(act.code).toBe(0);
    expect(act.stdout).toBe('done as planned\n');
    expect(await readFile(join(doDir, 'notes.md'), 'utf8')).toBe('# notes\n');
    const continued = JSON.stringify(standin().requests[1].body.messages);
    expect(continued).toContain('plan the notes file');
    expect(continued).toContain('PLAN: create notes.md with a title');
    expect(standin().requests[1].protocol).toBe('anthropic');
  });
});

describe('--output-file writes the final result to a file as well', () => {
  it('text: the file holds the answer stdout printed; json: the one result object stdout printed', async () => {
    const cwd = tempDir('bhrain-out-');
    standin().script({ text: 'the answer' }, { text: 'the answer' });
    const text = await runBhrain({ args: ['ask', '--atom', 'qwen', '--quiet', '--output-file', 'answer.txt', 'q?'], cwd, env: envFor() });
    expect(text.code).toBe(0);
    expect(await readFile(join(cwd, 'answer.txt'), 'utf8')).toBe(text.stdout);
    const json = await runBhrain({
      args: ['ask', '--atom', 'qwen', '--output', 'json', '--output-file', 'out/../result.json', 'q?'],
      cwd,
      env: envFor(),
    });
    expect(json.code).toBe(0);
    expect(await readFile(join(cwd, 'result.json'), 'utf8')).toBe(json.stdout);
    expect(JSON.parse(json.stdout)).toMatchObject({ type: 'result', output: 'the answer' });
  });

  it('a path whose directory is missing, or that is a directory, is exit 2 before any model request', async () => {
    const cwd = tempDir('bhrain-out-');
    const missing = await runBhrain({ args: ['ask', '--atom', 'qwen', '--output-file', 'no/such/dir/a.txt', 'q?'], cwd, env: envFor() });
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(/--output-file no\/such\/dir\/a\.txt: the directory \S+ does not exist/);
    const directory = await runBhrain({ args: ['ask', '--atom', 'qwen', '--output-file', '.', 'q?'], cwd, env: envFor() });
    expect(directory).toMatchObject({ code: 2, stdout: '' });
    expect(directory.stderr).toMatch(/--output-file \.: is a directory/);
    expect(standin().requests).toEqual([]);
  });

  it('a failed run replaces an older result: the error object with --output json, an empty answer in text', async () => {
    const cwd = tempDir('bhrain-out-');
    await writeFile(join(cwd, 'stale.json'), '{"output":"from an older run"}');
    const json = await runBhrain({
      args: ['ask', '--atom', 'gpt-5', '--output', 'json', '--output-file', 'stale.json', 'q?'],
      cwd,
      env: envFor(),
    });
    expect(json.code).toBe(2);
    expect(await readFile(join(cwd, 'stale.json'), 'utf8')).toBe(json.stdout);
    expect(JSON.parse(json.stdout)).toMatchObject({
      type: 'result',
      exitCode: 2,
      error: { message: expect.stringMatching(/unknown atom 'gpt-5'/) },
    });
    const text = await runBhrain({ args: ['ask', '--atom', 'gpt-5', '--output-file', 'stale.json', 'q?'], cwd, env: envFor() });
    expect(text.code).toBe(2);
    expect(await readFile(join(cwd, 'stale.json'), 'utf8')).toBe('');
  });
});

/** the usage and supplier errors: each is its message on stderr and its exit code, with nothing on stdout and no stack */
const ERROR_CASES: Array<{
  name: string;
  args: string[];
  env?: Record<string, string | undefined>;
  stdin?: string;
  code: number;
  stderr: RegExp;
}> = [
  {
    name: 'missing input',
    args: ['act', '--atom', 'qwen'],
    code: 2,
    stderr: /missing input: the task is empty\. Give it as an argument, with --input/,
  },
  {
    name: 'no atom and no supplier key',
    args: ['act', '--input', 'x'],
    env: { ANTHROPIC_API_KEY: undefined, QWEN_API_KEY: undefined },
    code: 2,
    stderr:
      /no atom: no --atom, no "atom" setting, and no supplier key is set\. Set one of ANTHROPIC_AUTH_TOKEN or ANTHROPIC_API_KEY, QWEN_API_KEY or DASHSCOPE_API_KEY, OPENAI_API_KEY/,
  },
  {
    name: 'unknown atom',
    args: ['act', '--atom', 'gpt-5', '--input', 'x'],
    code: 2,
    stderr: /unknown atom 'gpt-5': did you mean 'openai\/gpt-5'\?/,
  },
  {
    name: 'unknown arch',
    args: ['act', '--arch', 'bhrain.struct.v9', '--atom', 'qwen', '--input', 'x'],
    code: 2,
    stderr: /unknown --arch 'bhrain\.struct\.v9': did you mean 'bhrain\.struct\.v1'\? choose one of bhrain\.struct\.v1/,
  },
  {
    name: 'unknown ref',
    args: ['act', '--atom', 'qwen', '--on-series', 'deadbeefdeadbeef', '--input', 'x'],
    code: 2,
    stderr: /series not found: no series deadbeefdeadbeef in the ref store .* start a new series by running without --on-series/,
  },
  {
    name: 'both refs',
    args: ['act', '--atom', 'qwen', '--on-series', 'aaaaaaaa', '--on-episode', 'bbbbbbbb', '--input', 'x'],
    code: 2,
    stderr: /give --on-episode or --on-series, not both/,
  },
  { name: 'unknown flag', args: ['act', '--atom', 'qwen', '--inptu', 'x'], code: 2, stderr: /unknown option '--inptu'/ },
  {
    name: 'bad timeout',
    args: ['act', '--atom', 'qwen', '--timeout-ms', 'soon', '--input', 'x'],
    code: 2,
    stderr: /--timeout-ms must be a whole number of milliseconds of at least 1, got 'soon'/,
  },
  {
    name: 'bad permission',
    args: ['act', '--atom', 'qwen', '--permission', 'yolo', '--input', 'x'],
    code: 2,
    stderr:
      /--permission yolo: not a builtin guard and not a readable rules file \(ENOENT\): the builtins are allowAll, readOnly, promptForWrites; or give rules inline/,
  },
  {
    name: 'auth: no key',
    args: ['act', '--atom', 'claude', '--input', 'x'],
    env: { ANTHROPIC_API_KEY: undefined },
    code: 4,
    stderr: /no API key for claude\/sonnet at \S+: set ANTHROPIC_API_KEY/,
  },
  {
    name: 'llm unreachable',
    args: ['act', '--atom', 'qwen', '--input', 'x'],
    env: { QWEN_BASE_URL: 'http://127.0.0.1:9/v1' },
    code: 4,
    stderr: /qwen\/qwen3-coder-plus failed 5 times in a row .*unreachable or overloaded/,
  },
];

describe('errors: message and exit code', () => {
  it.each(ERROR_CASES)(
    '$name → exit $code',
    async ({ args, env, stdin, code, stderr }) => {
      const cwd = tempDir('bhrain-err-');
      const run = await runBhrain({ args, cwd, env: envFor(env), stdin });
      expect(run.stderr).toMatch(stderr);
      expect(run.code).toBe(code);
      expect(run.stdout).toBe('');
      expect(run.stderr).not.toMatch(/^\s+at /m);
    },
    120_000,
  );

  it('max iterations → exit 3 with the partial answer alone on stdout, and why on stderr', async () => {
    const cwd = tempDir('bhrain-err-');
    standin().script({ text: 'halfway', toolCalls: [{ name: 'glob', input: { pattern: '*' } }] });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--max-iterations', '1', '--input', 'x'], cwd, env: envFor() });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('halfway\n');
    expect(run.stderr).toMatch(/^bhrain act: stopped after 1 iteration, before the task was complete\. The answer on stdout is partial\./m);
  });

  it('a loop-side failure (the ref store cannot be written) → exit 5, with the answer still printed', async () => {
    const cwd = tempDir('bhrain-err-');
    const notADir = join(cwd, 'file');
    await writeFile(notADir, 'x');
    standin().script({ text: 'answer' });
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', '--input', 'x'], cwd, env: envFor({ BHRAIN_HOME: notADir }) });
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/could not save the (episode|series) .* to the ref store/);
  });

  it('SIGINT mid-run stops it gracefully: the running command is killed, refs are saved, exit 130', async () => {
    const cwd = tempDir('bhrain-err-');
    // a sleep of a length nothing else uses, so the host's process table shows whether it survived
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'echo $$ > shell.pid; sleep 30.0417' } }] },
      { text: 'never reached' },
    );
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'bhrain'), 'act', '--atom', 'qwen', '--input', 'wait a while'], {
      cwd,
      env: envFor() as NodeJS.ProcessEnv,
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const until = Date.now() + 10_000;
    while (!(await exists(join(cwd, 'shell.pid'))) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    // seen running first, so its absence after the stop means something
    expect(await findProcesses('sleep 30.0417')).toHaveLength(1);
    const started = Date.now();
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stderr).toMatch(/SIGINT: stopping/);
    const series = /^series: ([0-9a-f]{64})$/m.exec(stderr)?.[1];
    expect(series).toBeDefined();
    expect(await readdir(join(home, 'refs', 'series'))).toContain(`${series}.json`);
    // the shell's $$ is a pid inside the sandbox's namespace: look for the command itself among the host's processes
    expect(await findProcesses('sleep 30.0417')).toEqual([]);
  });

  it('a non-TTY run that needed a prompt is denied and says so', async () => {
    const cwd = tempDir('bhrain-err-');
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'touch made.txt' } }] }, { text: 'approval was needed' });
    const run = await runBhrain({
      args: ['act', '--atom', 'qwen', '--permission', 'promptForWrites', '--input', 'make a file'],
      cwd,
      env: envFor(),
    });
    expect(run.code).toBe(0);
    expect(await exists(join(cwd, 'made.txt'))).toBe(false);
    expect(run.stderr).toMatch(/✗ bash denied: bash runs commands \(it needs approval, and there is no terminal to ask on\)/);
    expect(JSON.stringify(standin().requests[1].body)).toMatch(
      /approval was needed but there is no way to ask the user \(not an interactive terminal\)/,
    );
  });
});

import { execFile } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { genGitRepo } from '#test-helpers/git.js';
import { genCliEnv, PACKAGE_ROOT, runProcess } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

// `npm run demo` is `npm run build`, then this compile, then this script. The tests run the last two: a build here would
// rewrite dist/ under the other acceptance tests running beside them
const DEMO_SCRIPT = join(PACKAGE_ROOT, '.tsc-out', 'demo', 'scripts', 'demo.js');
beforeAll(async () => {
  await promisify(execFile)(
    process.execPath,
    [join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.demo.json'],
    { cwd: PACKAGE_ROOT },
  );
}, 120_000);

/** the environment of a newcomer's shell: no supplier key or endpoint at all, and a temp dir the test can inspect */
const newcomerEnv = (tmp: string): Record<string, string | undefined> => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|QWEN|DASHSCOPE)_/.test(name))),
  TMPDIR: tmp,
});

/** runs the demo script; `offline` runs it in a network namespace of its own (bubblewrap), where only loopback exists */
const runDemo = (input: { env: Record<string, string | undefined>; args?: string[]; offline?: boolean }) => {
  const demo = [process.execPath, DEMO_SCRIPT, ...(input.args ?? [])];
  const [command, ...args] = input.offline ? ['bwrap', '--dev-bind', '/', '/', '--unshare-net', ...demo] : demo;
  return runProcess({ command, args, cwd: PACKAGE_ROOT, env: input.env });
};

const { standin } = useStandin();
let tmp: string;
const tmps: string[] = [];
const genTmp = async () => {
  tmp = tempDir('bhrain-demo-test-');
  tmps.push(tmp);
  return tmp;
};
afterEach(async () => {
  await Promise.all(tmps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** the demo's stdout: the first run's answer (text mode), then the follow-up's JSON object, one field a line */
const splitStdout = (stdout: string): { answer: string; json: any } => {
  const jsonStart = stdout.indexOf('\n{\n') + 1;
  expect(jsonStart, stdout).toBeGreaterThan(0);
  return { answer: stdout.slice(0, jsonStart), json: JSON.parse(stdout.slice(jsonStart)) };
};

/** the follow-up the demo asks with --continue */
const FOLLOW_UP = 'Which file did you write, and what is in it?';

describe('the main job in two commands: npm run demo', () => {
  it('demo: without a key or a network it runs bhrain act in text mode against the labelled scripted stand-in (tools, a denial, refs, the answer alone on stdout), then follows up with ask --continue in JSON; exit 0, no temp dirs left', async () => {
    const run = await runDemo({ env: newcomerEnv(await genTmp()), offline: true });
    expect(run.code, run.stderr).toBe(0);

    // labelled as a scripted stand-in, not a real model
    expect(run.stderr).toMatch(/the model is a SCRIPTED STAND-IN, not a real model/);
    expect(run.stderr).toMatch(/replays 6 fixed turns/);

    // 1. the real CLI at work in text mode (no --output), its progress relayed: the command, then each tool call
    const actLine = /^\$ bhrain act .*$/m.exec(run.stderr)?.[0];
    expect(actLine).toMatch(/^\$ bhrain act --atom claude\/haiku --permission \.\.\/rules\.json .*--input '/);
    expect(actLine).not.toContain('--output');
    for (const call of ['glob notes/**/*.md', 'read notes/todo.md', 'write DONE.md', 'bash rm scratch.tmp', 'bash git status --short'])
      expect(run.stderr).toContain(`→ ${call}`);
    // the guard denial, read from the CLI's stderr, with the rule that denied it
    expect(run.stderr).toMatch(/^ {2}│ {3}✗ bash denied: denied by rule `bash\(rm \*\)` \(rm scratch\.tmp\)$/m);
    expect(run.stderr).toMatch(
      /^Denied calls \(the ✗ lines on stderr\): 1\n {2}denied: bash: denied by rule `bash\(rm \*\)` \(rm scratch\.tmp\)$/m,
    );
    expect(run.stderr).toContain('scratch.tmp is still there: the rule `bash(rm *)` denied the call.');
    expect(run.stderr).toMatch(/^ {2}\?\? DONE\.md$/m);
    // the refs of both runs, on the CLI's stderr
    expect(run.stderr.match(/^ {2}│ episode: [0-9a-f]{64}$/gm)).toHaveLength(2);
    const series = [...run.stderr.matchAll(/^ {2}│ series: ([0-9a-f]{64})$/gm)].map((match) => match[1]);
    expect(series).toHaveLength(2);

    // the answer, announced on stderr, is the first thing on stdout, on its own: not in the narration, not prefixed
    expect(run.stderr).toMatch(/^stdout: the answer$/m);
    const { answer, json } = splitStdout(run.stdout);
    expect(answer).toMatch(/^Wrote DONE\.md with the 2 items marked done [^\n]*\n$/);
    expect(run.stderr).not.toContain('Wrote DONE.md with');

    // 2. the follow-up continues the first run's conversation, in JSON, one field a line
    expect(run.stderr).toContain(`$ bhrain ask --atom claude/haiku --max-budget-usd 0.25 --continue --output json '${FOLLOW_UP}'`);
    expect(run.stderr).toMatch(/^stdout: one JSON object \(`--output json`\), shown one field a line:$/m);
    expect(run.stdout.slice(answer.length)).toMatch(/^\{\n {2}"type": "result",\n {2}"schemaVersion": 1,\n/);
    expect(json).toMatchObject({
      type: 'result',
      schemaVersion: 1,
      skill: 'ask',
      termination: 'complete',
      exitCode: 0,
      // the series the first run began, continued: a new hash, the second printed on stderr
      series: { hash: series[1] },
      toolCalls: { made: 0, denied: 0 },
      error: null,
    });
    expect(series[1]).not.toBe(series[0]);
    expect(json.output).toMatch(/^I wrote DONE\.md\. It lists the 2 items marked done/);
    expect(run.stderr.match(/^exit 0\b/gm)).toHaveLength(2);

    // the closing tip runs from this checkout, in the user's own repository: no ref from the removed store, no bare `bhrain`
    expect(run.stderr.split('\n')).toContain(
      `  node ${join(PACKAGE_ROOT, 'bin', 'bhrain')} ask --atom claude/haiku 'what does this repository do?'`,
    );
    expect(run.stderr).toMatch(/^In a project that installed the package .*: npx bhrain ask --atom claude\/haiku /m);
    expect(run.stderr).not.toContain('--on-series');

    // the temp repo, the ref store and the rules file are gone; nothing else was left in TMPDIR either
    expect(await readdir(tmp)).toEqual([]);
  }, 60_000);

  it('demo: with ANTHROPIC_API_KEY set both runs go to the supplier the environment names, the follow-up carrying the first conversation, and stderr says so', async () => {
    // the "real supplier" is a stand-in the test owns, reached the way a real one is: the user's key and base URL
    standin().script({ text: 'done on the real supplier' }, { text: 'the follow-up, answered on the real supplier' });
    const env = { ...newcomerEnv(await genTmp()), ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: standin().url };
    const run = await runDemo({ env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/ANTHROPIC_API_KEY is set: the task runs on the REAL supplier \(atom claude\/haiku\)/);
    expect(run.stderr).not.toMatch(/SCRIPTED STAND-IN/);
    expect(standin().requests).toHaveLength(2);
    for (const { headers } of standin().requests) expect(headers['x-api-key'] ?? headers.authorization).toMatch(/^(Bearer )?test-key$/);
    const [first, second] = standin().requests.map((request) => JSON.stringify(request.body));
    expect(first).toContain('write DONE.md listing the items marked done');
    // --continue found the first run: the follow-up's request holds the task and its answer, then the question
    expect(second).toContain('write DONE.md listing the items marked done');
    expect(second).toContain('done on the real supplier');
    expect(second).toContain(FOLLOW_UP);
    const { answer, json } = splitStdout(run.stdout);
    expect(answer).toBe('done on the real supplier\n');
    expect(json).toMatchObject({ skill: 'ask', output: 'the follow-up, answered on the real supplier', termination: 'complete' });
    expect(run.stderr).toMatch(/^Now on your own code, with a real model: in any git repository, with ANTHROPIC_API_KEY set,$/m);
    expect(await readdir(tmp)).toEqual([]);
  }, 60_000);

  it('demo: the closing tip runs as printed, from this checkout, in another repository', async () => {
    const demo = await runDemo({ env: newcomerEnv(await genTmp()), args: ['--standin'] });
    expect(demo.code, demo.stderr).toBe(0);
    const tip = /^ {2}(node .* ask --atom claude\/haiku 'what does this repository do\?')$/m.exec(demo.stderr)?.[1];
    expect(tip, demo.stderr).toBeDefined();

    // the user's key, here the test's stand-in; a repository of their own, far from the checkout
    standin().script({ text: 'a repository with a readme' });
    const repo = genGitRepo({ files: { 'README.md': '# mine\n' }, commit: 'mine' });
    const env = genCliEnv({ standin: standin(), home: await genTmp() });
    const run = await runProcess({ command: 'sh', args: ['-c', tip!], cwd: repo, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('a repository with a readme\n');
    expect(JSON.stringify(standin().requests[0].body)).toContain('what does this repository do?');
  }, 60_000);

  it('demo: --standin uses the scripted stand-in even with a key set; an unknown argument is exit 2, naming it', async () => {
    const forced = await runDemo({ env: { ...newcomerEnv(await genTmp()), ANTHROPIC_API_KEY: 'a-real-looking-key' }, args: ['--standin'] });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(/SCRIPTED STAND-IN/);

    const bad = await runDemo({ env: newcomerEnv(await genTmp()), args: ['--real'] });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("demo: unknown argument '--real': the demo takes only --standin (use the stand-in even when a key is set)\n");
    expect(bad.stdout).toBe('');
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { PACKAGE_ROOT, runProcess } from './runCli.js';
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

describe('the main job in two commands: npm run demo', () => {
  it('demo: without a key or a network it runs bhrain act against the labelled scripted stand-in: tools, a denial, refs, one JSON object, exit 0, no temp dirs left', async () => {
    const run = await runDemo({ env: newcomerEnv(await genTmp()), offline: true });
    expect(run.code, run.stderr).toBe(0);

    // labelled as a scripted stand-in, not a real model
    expect(run.stderr).toMatch(/the model is a SCRIPTED STAND-IN, not a real model/);
    // the real CLI at work, its progress relayed: the command, then each tool call
    expect(run.stderr).toMatch(/^\$ bhrain act --atom claude\/haiku --permission \.\.\/rules\.json .*--output json/m);
    for (const call of ['glob notes/**/*.md', 'read notes/todo.md', 'write DONE.md', 'bash rm scratch.tmp', 'bash git status --short'])
      expect(run.stderr).toContain(`→ ${call}`);
    // the guard denial, with the rule that denied it
    expect(run.stderr).toMatch(/^ {2}denied: bash: denied by rule `bash\(rm \*\)` \(rm scratch\.tmp\)$/m);
    expect(run.stderr).toContain('scratch.tmp is still there: the rule `bash(rm *)` denied the call.');
    // the refs, on the CLI's stderr
    expect(run.stderr).toMatch(/^ {2}│ episode: [0-9a-f]{64}$/m);
    const series = /^ {2}│ series: ([0-9a-f]{64})$/m.exec(run.stderr)?.[1];
    expect(series).toBeDefined();

    // stdout is the CLI's one JSON object (pretty-printed), the same run as the refs on stderr
    const json = JSON.parse(run.stdout);
    expect(json).toMatchObject({
      type: 'result',
      schemaVersion: 1,
      skill: 'act',
      termination: 'complete',
      exitCode: 0,
      series: { hash: series },
      toolCalls: { made: 5, failed: 0, denied: 1, denials: [{ tool: 'bash', reason: expect.stringContaining('bash(rm *)') }] },
      error: null,
    });
    expect(json.output).toMatch(/^Wrote DONE\.md with the 2 items marked done/);
    expect(run.stderr).toMatch(/^ {2}\?\? DONE\.md$/m);

    // the temp repo, the ref store and the rules file are gone; nothing else was left in TMPDIR either
    expect(await readdir(tmp)).toEqual([]);
  }, 60_000);

  it('demo: with ANTHROPIC_API_KEY set the same task goes to the supplier the environment names, and stderr says so', async () => {
    // the "real supplier" is a stand-in the test owns, reached the way a real one is: the user's key and base URL
    standin().script({ text: 'done on the real supplier' });
    const env = { ...newcomerEnv(await genTmp()), ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: standin().url };
    const run = await runDemo({ env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/ANTHROPIC_API_KEY is set: the task runs on the REAL supplier \(atom claude\/haiku\)/);
    expect(run.stderr).not.toMatch(/SCRIPTED STAND-IN/);
    expect(standin().requests).toHaveLength(1);
    const { headers } = standin().requests[0];
    expect(headers['x-api-key'] ?? headers.authorization).toMatch(/^(Bearer )?test-key$/);
    expect(JSON.stringify(standin().requests[0].body)).toContain('write DONE.md listing the items marked done');
    expect(JSON.parse(run.stdout)).toMatchObject({ output: 'done on the real supplier', termination: 'complete' });
    expect(await readdir(tmp)).toEqual([]);
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

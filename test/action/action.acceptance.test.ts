// the GitHub Action (action.yml), its steps run as the runner runs them (test/action/runAction.ts),
// against this checkout's built CLI and the LLM stand-in
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { genCliEnv, PACKAGE_ROOT } from '../acceptance/runCli.js';
import { useStandin } from '#standin/useStandin.js';
import { parseCommandFile, runAction, type ActionFile } from './runAction.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
const actionYml = await readFile(join(PACKAGE_ROOT, 'action.yml'), 'utf8');
let temp: string;
let workspace: string;
beforeEach(async () => {
  temp = tempDir('bhrain-action-');
  workspace = join(temp, 'workspace');
  await mkdir(workspace);
});
afterEach(async () => {
  await rm(temp, { recursive: true, force: true });
});

/** the runner's env for the job: the stand-in's URLs, a home of the run's own; keys only where a test gives them */
const jobEnv = (overrides: Record<string, string | undefined> = {}) =>
  genCliEnv({ standin: standin(), home: join(temp, 'home') }, { ANTHROPIC_API_KEY: undefined, QWEN_API_KEY: undefined, ...overrides });
const run = (inputs: Record<string, string>, env = jobEnv()) =>
  runAction({ actionYml, actionPath: PACKAGE_ROOT, workspace, inputs, env, tempDir: temp });
const sentText = (index: number) => JSON.stringify(standin().requests[index].body);
/** the key a request carried: the claude SDK sends x-api-key, or a bearer token */
const apiKeySent = (index: number) => {
  const { headers } = standin().requests[index];
  return headers['x-api-key'] ?? String(headers.authorization).replace(/^Bearer /, '');
};

describe('the action runs bhrain and sets its outputs', () => {
  it('ask with a key input: result, exit-code, termination, cost, refs, record dir and the whole JSON are outputs', async () => {
    standin().script({ text: 'the retry policy is in src/retry.ts' });
    const action = await run({ prompt: 'where is the retry policy?', atom: 'claude/haiku', 'anthropic-api-key': 'test-key' });
    expect(action.steps.map((step) => [step.name, step.status])).toEqual([
      ["install bubblewrap (bash's sandbox) when missing", 'success'],
      ["key of bhrain's install", 'success'],
      ["cache bhrain's install", 'skipped'],
      ['install bhrain', 'skipped'],
      ['run bhrain', 'success'],
    ]);
    expect(action.skippedUses).toEqual(['actions/cache@v4']);
    expect(action.failed).toBe(false);
    const json = JSON.parse(action.outputs.json);
    expect(json).toMatchObject({ skill: 'ask', atom: 'claude/haiku', termination: 'complete', exitCode: 0 });
    expect(action.outputs).toMatchObject({
      result: 'the retry policy is in src/retry.ts',
      'exit-code': '0',
      termination: 'complete',
      'cost-usd': String(json.metrics.cost.usd),
      series: json.series.hash,
      episode: json.episode.hash,
      'record-dir': json.record,
      'structured-output': '',
    });
    expect(action.outputs.series).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(action.outputs['cost-usd'])).toBeGreaterThan(0);
    expect((await stat(action.outputs['record-dir'])).isDirectory()).toBe(true);
    // the key input reached the supplier as the env var the claude atom reads
    expect(apiKeySent(0)).toBe('test-key');
    // the runner sets GITHUB_ACTIONS: the CLI writes the job summary with the answer and how the run ended
    expect(action.summary).toContain('the retry policy is in src/retry.ts');
    expect(action.summary).toContain('complete');
    expect(action.summary).toContain(`$${json.metrics.cost.usd.toFixed(4)}`);
  });

  it('a hostile prompt is data: quotes, $(...), backticks and ${{ }} reach the model verbatim and run nothing', async () => {
    const pwned = join(temp, 'pwned');
    const prompt = `"; touch ${pwned}; " $(touch ${pwned}) \`touch ${pwned}\` \${{ inputs.atom }} '\nEOF\nexit-code=0`;
    standin().script({ text: 'fine' });
    const action = await run({ prompt, atom: 'qwen', 'qwen-api-key': 'k', args: `--max-iterations\n5` });
    expect(action.outputs['exit-code']).toBe('0');
    expect(existsSync(pwned)).toBe(false);
    expect(sentText(0)).toContain(JSON.stringify(prompt).slice(1, -1));
  });

  it('a multi-line answer holding EOF lines and name=value text is one result output, and forges no other output', async () => {
    const answer = 'line one\nEOF\nexit-code=0\ntermination<<EOF\ncomplete\nEOF\n\nlast line';
    standin().script({ text: answer });
    const action = await run({ prompt: 'x', atom: 'qwen', 'qwen-api-key': 'k' });
    expect(action.outputs.result).toBe(answer);
    expect(action.outputs.termination).toBe('complete');
    const stepOutput = parseCommandFile(await readFile(join(temp, await findRunnerDir(), 'output-4'), 'utf8'));
    expect(Object.keys(stepOutput).sort()).toEqual([
      'cost-usd',
      'episode',
      'exit-code',
      'json',
      'record-dir',
      'result',
      'series',
      'structured-output',
      'termination',
    ]);
  });

  it('prompt-file is the task on stdin; with a prompt it is the context after the instruction (a PR diff)', async () => {
    await writeFile(join(workspace, 'pr.diff'), 'diff --git a/x b/x\n+added line\n');
    standin().script({ text: 'looks fine' }, { text: 'still fine' });
    const both = await run({ prompt: 'review this diff', 'prompt-file': 'pr.diff', atom: 'qwen', 'qwen-api-key': 'k' });
    expect(both.outputs.result).toBe('looks fine');
    expect(sentText(0)).toContain('review this diff\\n\\n<stdin>\\ndiff --git a/x b/x\\n+added line\\n</stdin>');
    const fileOnly = await run({ 'prompt-file': 'pr.diff', atom: 'qwen', 'qwen-api-key': 'k' });
    expect(fileOnly.outputs['exit-code']).toBe('0');
    expect(sentText(1)).toContain('diff --git a/x b/x\\n+added line');
  });

  it('json-schema: structured-output is the validated value as JSON', async () => {
    standin().script({ text: '{"verdict":"approve","issues":0}' });
    const schema = JSON.stringify({
      type: 'object',
      properties: { verdict: { enum: ['approve', 'reject'] }, issues: { type: 'integer' } },
      required: ['verdict', 'issues'],
    });
    const action = await run({ prompt: 'judge', atom: 'qwen', 'qwen-api-key': 'k', 'json-schema': schema });
    expect(action.failed).toBe(false);
    expect(JSON.parse(action.outputs['structured-output'])).toEqual({ verdict: 'approve', issues: 0 });
  });

  it('working-directory: bhrain runs there (its files are what the model reads)', async () => {
    await mkdir(join(workspace, 'sub'));
    await writeFile(join(workspace, 'sub', 'notes.md'), 'the secret word is heron\n');
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'notes.md' } }] }, { text: 'heron' });
    const action = await run({ prompt: 'what word?', atom: 'qwen', 'qwen-api-key': 'k', 'working-directory': 'sub' });
    expect(action.outputs['exit-code']).toBe('0');
    expect(sentText(1)).toContain('the secret word is heron');
  });
});

describe('the step fails exactly when the run failed, and its outputs are set either way', () => {
  it('credentials refused: the step fails with exit 4, and result, termination and json are still outputs (continue-on-error)', async () => {
    standin().script({ error: { status: 401, message: 'invalid x-api-key' } });
    const action = await run({ prompt: 'x', atom: 'claude/haiku', 'anthropic-api-key': 'wrong' });
    expect(action.failed).toBe(true);
    expect(action.steps.at(-1)).toMatchObject({ name: 'run bhrain', status: 'failure', code: 4 });
    expect(action.outputs['exit-code']).toBe('4');
    expect(action.outputs.termination).toBe('error');
    expect(JSON.parse(action.outputs.json)).toMatchObject({ exitCode: 4, error: { code: expect.any(String) } });
  });

  it('fail-on-denied: a denied call fails the step with 7 though the run completed; without it the step passes', async () => {
    const denied = () =>
      standin().script({ toolCalls: [{ name: 'write', input: { path: 'x.md', content: 'x' } }] }, { text: 'could not write' });
    denied();
    const failing = await run({
      prompt: 'write x.md',
      skill: 'act',
      permission: 'readOnly',
      atom: 'qwen',
      'qwen-api-key': 'k',
      'fail-on-denied': 'true',
    });
    expect([failing.failed, failing.steps.at(-1)?.code, failing.outputs['exit-code'], failing.outputs.result]).toEqual([
      true,
      7,
      '7',
      'could not write',
    ]);
    expect(JSON.parse(failing.outputs.json).toolCalls.denied).toBe(1);
    denied();
    const passing = await run({ prompt: 'write x.md', skill: 'act', permission: 'readOnly', atom: 'qwen', 'qwen-api-key': 'k' });
    expect([passing.failed, passing.outputs['exit-code'], passing.outputs.termination]).toEqual([false, '0', 'complete']);
    expect(existsSync(join(workspace, 'x.md'))).toBe(false);
  });

  it("a bad flag given through args is bhrain's usage error: exit 2, termination usage, no request made", async () => {
    const action = await run({ prompt: 'x', atom: 'qwen', 'qwen-api-key': 'k', args: '--max-iterations\nmany' });
    expect([action.failed, action.outputs['exit-code'], action.outputs.termination]).toEqual([true, '2', 'usage']);
    expect(standin().requests).toHaveLength(0);
  });

  it.each([
    [{ skill: 'rm -rf' }, 'input skill must be act or ask'],
    [{ 'fail-on-denied': 'yes' }, 'input fail-on-denied must be true or false'],
    [{ 'prompt-file': 'missing.txt' }, "input prompt-file: no file 'missing.txt'"],
  ])('a bad input of the action (%j) fails the step with exit 2 naming it, outputs set', async (bad, message) => {
    const action = await run({ prompt: 'x', atom: 'qwen', 'qwen-api-key': 'k', ...bad });
    expect([action.failed, action.steps.at(-1)?.code, action.outputs['exit-code'], action.outputs.termination]).toEqual([
      true,
      2,
      '2',
      'usage',
    ]);
    expect(action.steps.at(-1)?.stdout).toContain(`::error title=bhrain::${message}`);
    expect(JSON.parse(action.outputs.json).error.message).toContain(message);
    expect(standin().requests).toHaveLength(0);
  });

  it("a key input that is empty leaves the workflow's own env var in place", async () => {
    standin().script({ text: 'ok' });
    const action = await run({ prompt: 'x', atom: 'claude/haiku' }, jobEnv({ ANTHROPIC_API_KEY: 'from-env' }));
    expect(action.outputs['exit-code']).toBe('0');
    expect(apiKeySent(0)).toBe('from-env');
  });
});

describe('the github-token input: masked for the GitHub hosts', () => {
  const TOKEN = 'ghs_jobTokenOfTheWorkflow0123456789';

  it("act: bash sees GH_TOKEN and GITHUB_TOKEN as placeholders, GitHub's hosts are allowed, and the token is nowhere the model or the outputs are", async () => {
    standin().script(
      { toolCalls: [{ id: 'toolu_t', name: 'bash', input: { command: 'printenv GH_TOKEN GITHUB_TOKEN BHRAIN_IN_GITHUB_TOKEN; true' } }] },
      { text: 'done' },
    );
    const action = await run({ prompt: 'x', skill: 'act', atom: 'qwen', 'qwen-api-key': 'k', 'github-token': TOKEN });
    expect(action.outputs['exit-code']).toBe('0');
    const result = JSON.stringify(standin().requests.at(-1)?.body);
    expect(result).toMatch(/bhrain-masked-GH_TOKEN-[0-9a-f]{24}\\nbhrain-masked-GITHUB_TOKEN-[0-9a-f]{24}(\\n)?"/);
    expect(JSON.stringify(standin().requests)).not.toContain(TOKEN);
    expect(action.outputs.json).not.toContain(TOKEN);
    expect(JSON.parse(action.outputs.json).network.allowedDomains).toEqual(['github.com', 'api.github.com', 'uploads.github.com']);
  });

  it("act on GitHub Enterprise: the hosts are the server's and its API's, from GITHUB_SERVER_URL and GITHUB_API_URL", async () => {
    standin().script({ text: 'done' });
    const env = jobEnv({ GITHUB_SERVER_URL: 'https://ghe.example.com', GITHUB_API_URL: 'https://api.ghe.example.com/api/v3' });
    const action = await run({ prompt: 'x', skill: 'act', atom: 'qwen', 'qwen-api-key': 'k', 'github-token': TOKEN }, env);
    expect(JSON.parse(action.outputs.json).network.allowedDomains).toEqual(['ghe.example.com', 'api.ghe.example.com']);
  });

  it('ask: the token is not given to the run at all, and a warning says so', async () => {
    standin().script({ text: 'done' });
    const action = await run({ prompt: 'x', skill: 'ask', atom: 'qwen', 'qwen-api-key': 'k', 'github-token': TOKEN });
    expect(action.outputs['exit-code']).toBe('0');
    expect(action.steps.at(-1)?.stdout).toContain('::warning title=bhrain::input github-token is for act');
    expect(JSON.parse(action.outputs.json)).not.toHaveProperty('network');
  });
});

describe('no key at all (a pull request from a fork gets no secrets)', () => {
  it('the step fails with exit 4 naming the env var to set, before any request', async () => {
    const action = await run({ prompt: 'x', atom: 'claude/haiku', 'anthropic-api-key': '' });
    expect([action.failed, action.outputs['exit-code']]).toEqual([true, '4']);
    expect(JSON.parse(action.outputs.json).error.message).toContain('ANTHROPIC_API_KEY');
    expect(standin().requests).toHaveLength(0);
  });
});

describe('the harness refuses what it cannot run as the runner would', () => {
  it('an expression it does not know, in a step or an output, throws instead of passing silently', async () => {
    const withToken = actionYml.replace('bash "$GITHUB_ACTION_PATH/action/run.sh"', 'echo "${{ github.token }}"');
    await expect(
      runAction({ actionYml: withToken, actionPath: PACKAGE_ROOT, workspace, inputs: {}, env: jobEnv(), tempDir: temp }),
    ).rejects.toThrow('does not know the expression ${{ github.token }}');
  });

  it('parses both GITHUB_OUTPUT forms and refuses an unterminated one', () => {
    expect(parseCommandFile('a=1\nb<<X\nline\nX\nc=x=y\n')).toEqual({ a: '1', b: 'line', c: 'x=y' });
    expect(() => parseCommandFile('b<<X\nline\n')).toThrow('no closing delimiter X');
  });
});

describe('every input and output of action.yml is in the docs table of docs/ci.md, and only those', () => {
  it('the tables of docs/ci.md match action.yml', async () => {
    const action = parse(actionYml) as ActionFile;
    const page = await readFile(join(PACKAGE_ROOT, 'docs', 'ci.md'), 'utf8');
    const rows = (heading: string) => {
      const section = page.split(`### ${heading}\n`)[1]?.split('\n#')[0] ?? '';
      return [...section.matchAll(/^\| `([\w-]+)` \|/gm)].map((match) => match[1]);
    };
    expect(rows('Inputs').sort()).toEqual(Object.keys(action.inputs).sort());
    expect(rows('Outputs').sort()).toEqual(Object.keys(action.outputs).sort());
  });
});

/** the runner-files dir the harness made under temp (one per runAction call; these tests look after one call) */
const findRunnerDir = async () => {
  const dirs = (await readdir(temp)).filter((name) => name.startsWith('runner-'));
  expect(dirs).toHaveLength(1);
  return dirs[0];
};

describe('the documented workflows run as written (the action through the harness, gh a recorder)', () => {
  /** every yaml block of a page that uses the action, as its list of steps */
  const workflowsOf = async (page: string) => {
    const text = await readFile(join(PACKAGE_ROOT, page), 'utf8');
    return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((match) => parse(match[1]))
      .map((doc) => (Array.isArray(doc) ? doc : (doc?.jobs?.review?.steps ?? [])) as Array<Record<string, any>>)
      .filter((steps) => steps.some((step) => step.uses === '<owner>/bhrain@v1'));
  };

  it.each(['docs/ci.md', 'readme.md'])(
    'the pull-request review of %s: the diff reaches the model and gh posts the result',
    async (page) => {
      const workflows = await workflowsOf(page);
      expect(workflows).toHaveLength(1);
      const action = parse(actionYml) as ActionFile;
      const runnerTemp = join(temp, 'runner-temp');
      const ghLog = join(temp, 'gh.log');
      const bin = join(temp, 'bin');
      await Promise.all([mkdir(runnerTemp), mkdir(bin)]);
      // gh is GitHub's CLI: here a recorder of its arguments, which prints a diff for `gh pr diff`
      await writeFile(
        join(bin, 'gh'),
        `#!/usr/bin/env bash\nprintf '%s\\0' "$@" >> ${JSON.stringify(ghLog)}\nprintf '\\036' >> ${JSON.stringify(ghLog)}\nif [ "$1 $2" = "pr diff" ]; then printf 'diff --git a/x b/x\\n+added line\\n'; fi\n`,
        { mode: 0o755 },
      );
      const known: Record<string, string> = {
        'github.token': 'gh-token',
        'github.event.pull_request.number': '42',
        'secrets.ANTHROPIC_API_KEY': 'test-key',
        'runner.temp': runnerTemp,
      };
      const steps: Record<string, Record<string, string>> = {};
      const resolve = (value: unknown) =>
        String(value).replace(/\$\{\{(.*?)\}\}/g, (_, ref: string) => {
          const outputRef = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(ref.trim());
          if (outputRef) return steps[outputRef[1]][outputRef[2]];
          if (!(ref.trim() in known)) throw new Error(`the workflow uses an expression this test does not know: ${ref}`);
          return known[ref.trim()];
        });
      standin().script({ text: 'one risk: x is unchecked\n\n- line two' });
      for (const step of workflows[0].filter((each) => each.uses !== 'actions/checkout@v4')) {
        if (step.uses === '<owner>/bhrain@v1') {
          const inputs = Object.fromEntries(Object.entries(step.with).map(([key, value]) => [key, resolve(value)]));
          for (const name of Object.keys(inputs)) expect(Object.keys(action.inputs)).toContain(name);
          const ran = await runAction({ actionYml, actionPath: PACKAGE_ROOT, workspace, inputs, env: jobEnv(), tempDir: temp });
          expect(ran.failed).toBe(false);
          steps[step.id] = ran.outputs;
          continue;
        }
        const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([key, value]) => [key, resolve(value)]));
        const script = join(temp, 'step.sh');
        await writeFile(script, step.run);
        const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
          cwd: workspace,
          env: { PATH: `${bin}:${process.env.PATH}`, RUNNER_TEMP: runnerTemp, ...env },
          encoding: 'utf8',
        });
        expect(result.status, result.stderr).toBe(0);
      }
      expect(sentText(0)).toContain('<stdin>\\ndiff --git a/x b/x\\n+added line\\n</stdin>');
      const calls = (await readFile(ghLog, 'utf8'))
        .split('\x1e')
        .filter(Boolean)
        .map((line) => line.split('\0').slice(0, -1));
      expect(calls).toEqual([
        ['pr', 'diff', '42'],
        ['pr', 'comment', '42', '--body', 'one risk: x is unchecked\n\n- line two'],
      ]);
    },
  );
});

describe('the bubblewrap step installs it only when missing, with sudo when not root', () => {
  // the step's own script with a PATH of recorders only: bwrap there or not, id answering a uid, apt-get and sudo logging
  const runInstallStep = async (input: { uid: string; hasBwrap: boolean }) => {
    const step = (parse(actionYml) as ActionFile).runs.steps.find((each) => each.name?.startsWith('install bubblewrap'));
    const bin = join(temp, 'bin');
    const log = join(temp, 'calls.log');
    await mkdir(bin);
    const recorder = (name: string) => `#!/bin/bash\necho "${name} $*" >> ${JSON.stringify(log)}\n`;
    await writeFile(join(bin, 'id'), `#!/bin/bash\necho ${input.uid}\n`, { mode: 0o755 });
    await writeFile(join(bin, 'uname'), '#!/bin/bash\necho Linux\n', { mode: 0o755 });
    await writeFile(join(bin, 'apt-get'), recorder('apt-get'), { mode: 0o755 });
    await writeFile(join(bin, 'sudo'), `${recorder('sudo')}[ "$1" = -n ] && shift\nexec "$@"\n`, { mode: 0o755 });
    if (input.hasBwrap) await writeFile(join(bin, 'bwrap'), recorder('bwrap'), { mode: 0o755 });
    const script = join(temp, 'install.sh');
    await writeFile(script, step?.run ?? '');
    const result = spawnSync('/bin/bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { env: { PATH: bin }, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    return existsSync(log) ? (await readFile(log, 'utf8')).trim().split('\n') : [];
  };

  it('not root: sudo -n apt-get update, then install bubblewrap', async () => {
    expect(await runInstallStep({ uid: '1001', hasBwrap: false })).toEqual([
      'sudo -n apt-get update -qq',
      'apt-get update -qq',
      'sudo -n apt-get install -y -qq bubblewrap',
      'apt-get install -y -qq bubblewrap',
    ]);
  });

  it('root: apt-get without sudo', async () => {
    expect(await runInstallStep({ uid: '0', hasBwrap: false })).toEqual(['apt-get update -qq', 'apt-get install -y -qq bubblewrap']);
  });

  it('bwrap on PATH already: nothing is installed', async () => {
    expect(await runInstallStep({ uid: '1001', hasBwrap: true })).toEqual([]);
  });
});

describe('the install step, on a cache miss, sets bhrain up from the action checkout', () => {
  /** .what = the action run from a checkout with nothing cached (npm offline, from its cache): its install step and answer */
  const runFromCheckout = async (actionPath: string, answer: string) => {
    standin().script({ text: answer });
    // npm reads npm_config_* from the env: offline here, as the test machine has no registry but npm's cache
    const env = jobEnv({ npm_config_offline: 'true', npm_config_cache: process.env.npm_config_cache });
    const action = await runAction({
      actionYml,
      actionPath,
      workspace,
      inputs: { prompt: 'x', atom: 'qwen', 'qwen-api-key': 'k' },
      env,
      tempDir: temp,
      cacheHit: false,
    });
    expect(action.steps.find((step) => step.name === 'install bhrain')).toMatchObject({ status: 'success', code: 0 });
    expect([action.failed, action.outputs.result]).toEqual([false, answer]);
    expect(existsSync(join(actionPath, 'node_modules', 'openai'))).toBe(true);
    expect(existsSync(join(actionPath, 'node_modules', 'vitest'))).toBe(false);
  };

  it(
    'a prebuilt checkout: npm ci --omit=dev (offline, from the npm cache) installs what runs, no dev tool, and the run works',
    { timeout: 240_000 },
    async () => {
      const actionPath = join(temp, 'action-checkout');
      await mkdir(actionPath);
      for (const entry of ['package.json', 'package-lock.json', 'bin', 'dist', 'action', 'action.yml'])
        await cp(join(PACKAGE_ROOT, entry), join(actionPath, entry), { recursive: true });
      await runFromCheckout(actionPath, 'installed and answering');
    },
  );

  it(
    'a checkout of a ref as git holds it (no dist/: a tag or a branch): npm ci, build, prune to what runs, and the run works',
    { timeout: 480_000 },
    async () => {
      // the files git tracks, as `uses: <owner>/bhrain@<ref>` checks them out: dist/ is built, never committed
      const actionPath = join(temp, 'action-checkout');
      const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: PACKAGE_ROOT, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
      expect(tracked).toContain('action.yml');
      for (const file of tracked)
        if (existsSync(join(PACKAGE_ROOT, file))) await cp(join(PACKAGE_ROOT, file), join(actionPath, file), { recursive: true });
      expect(existsSync(join(actionPath, 'dist'))).toBe(false);
      await runFromCheckout(actionPath, 'built and answering');
      expect(existsSync(join(actionPath, 'dist', 'bundle', 'main.js'))).toBe(true);
    },
  );
});

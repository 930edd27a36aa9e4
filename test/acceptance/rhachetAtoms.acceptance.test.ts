// `bhrain act --atom <slug>` on a rhachet supplier's atom: a temp consumer repository depends on a rhachet-brains-*
// package (written from rhachet's atom contract), whose atom talks to the stand-in over real HTTP; the built CLI finds it
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';
import { writeRhachetSupplierPackage } from '#test-helpers/rhachetSupplierPackage.js';
import { genCliEnv, runBhrain } from './runCli.js';

const { standin } = useStandin();
let home: string;
let repo: string;
beforeEach(async () => {
  home = tempDir('bhrain-home-');
  repo = tempDir('bhrain-consumer-');
  await writeFile(join(repo, 'package.json'), JSON.stringify({ name: 'consumer', dependencies: { 'rhachet-brains-standin': '0.0.1' } }));
  await writeRhachetSupplierPackage({ repoDir: repo, name: 'standin' });
});
/** the CLI's env: the supplier's key as its usual variable (STANDIN_API_KEY), its endpoint the stand-in's */
const envFor = () => genCliEnv({ standin: standin(), home }, { STANDIN_API_KEY: 'test', STANDIN_BASE_URL: standin().openaiUrl });

describe('bhrain act --atom <a rhachet brain atom of this repository>', () => {
  it('runs a multi-step bash and edit task: the answer, the JSON, the refs, and a denied call', async () => {
    standin().script(
      { toolCalls: [{ name: 'write', input: { path: 'notes.txt', content: 'draft\n' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'rm -f notes.txt' } }] },
      { toolCalls: [{ name: 'edit', input: { path: 'notes.txt', old_string: 'draft', new_string: 'final' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'cat notes.txt' } }] },
      { text: 'notes.txt says final' },
    );
    const run = await runBhrain({
      args: [
        'act',
        '--atom',
        'standin/gpt-standin-1',
        '--input',
        'write notes.txt, then make it final',
        '--output',
        'json',
        '--disallowed-tools',
        'bash(rm:*)',
      ],
      cwd: repo,
      env: envFor(),
    });
    expect(run.stderr).not.toMatch(/could not load|warning/i);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json).toMatchObject({
      atom: 'standin/gpt-standin-1',
      output: 'notes.txt says final',
      termination: 'complete',
      exitCode: 0,
      episode: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      series: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      metrics: { iterations: 5 },
      toolCalls: { made: 4, denied: 1, denials: [expect.objectContaining({ tool: 'bash', by: 'guard' })] },
      error: null,
    });
    // tokens and cash come from the supplier's metrics (IsoPrice strings)
    expect(json.metrics.tokens.input).toBeGreaterThan(0);
    expect(json.metrics.cost.usd).toBeCloseTo(json.metrics.tokens.input * 0.000003 + json.metrics.tokens.output * 0.000015, 6);
    expect(await readFile(join(repo, 'notes.txt'), 'utf8')).toBe('final\n');
    // the denial went back to the supplier as error:constraint
    const denied = standin()
      .requests[2].body.messages.filter((message: { role: string }) => message.role === 'tool')
      .at(-1);
    expect(JSON.parse(denied.content)).toMatchObject({ signal: 'error:constraint' });
    // the refs continue: the next run builds on the series
    standin().script({ text: 'it says final' });
    const next = await runBhrain({
      args: ['ask', '--atom', 'standin/gpt-standin-1', '--on-series', json.series.hash, '--input', 'what does it say?', '--output', 'json'],
      cwd: repo,
      env: envFor(),
    });
    expect(next.code).toBe(0);
    expect(JSON.stringify(standin().requests.at(-1)!.body)).toContain('write notes.txt, then make it final');
  });

  it('stops at a budget mid-task (exit 6), and an unknown slug is exit 2 naming the close one', async () => {
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo one' } }] }, { text: 'never reached' });
    const run = await runBhrain({
      args: ['act', '--atom', 'standin/gpt-standin-1', '--input', 'go', '--max-tokens', '5', '--output', 'json'],
      cwd: repo,
      env: envFor(),
    });
    expect(run.code).toBe(6);
    expect(JSON.parse(run.stdout)).toMatchObject({ termination: 'budget', exitCode: 6 });
    const unknown = await runBhrain({ args: ['act', '--atom', 'standin/gpt-standin-2', '--input', 'go'], cwd: repo, env: envFor() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown atom 'standin\/gpt-standin-2': did you mean 'standin\/gpt-standin-1'\?/);
  });
});

describe('bhrain atoms', () => {
  it("lists bhrain's atoms and this repository's rhachet ones, with source, window and price; a package that throws is skipped with a warning", async () => {
    await writeFile(
      join(repo, 'package.json'),
      JSON.stringify({ dependencies: { 'rhachet-brains-standin': '0.0.1', 'rhachet-brains-broken': '0.0.1' } }),
    );
    const broken = await writeRhachetSupplierPackage({ repoDir: repo, name: 'broken' });
    await writeFile(join(broken, 'index.js'), "exports.getBrainAtomsByBroken = () => { throw new Error('no config'); };");
    const run = await runBhrain({ args: ['atoms', '-o', 'json'], cwd: repo, env: envFor() });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/could not extract brains from package "rhachet-brains-broken": no config/);
    const { atoms } = JSON.parse(run.stdout);
    expect(atoms.find((atom: { slug: string }) => atom.slug === 'claude/sonnet')).toMatchObject({ source: 'bhrain' });
    expect(atoms.find((atom: { slug: string }) => atom.slug === 'standin/gpt-standin-1')).toMatchObject({
      source: 'rhachet-brains-standin',
      contextWindowTokens: 200000,
      price: { input: 3, output: 15 },
      spec: expect.objectContaining({ gain: expect.any(Object) }),
    });
    const text = await runBhrain({ args: ['atoms'], cwd: repo, env: envFor() });
    expect(text.stdout).toMatch(/standin\/gpt-standin-1\s+rhachet-brains-standin\s+200000\s+in \$3 \/ out \$15 per Mtok/);
  });
});

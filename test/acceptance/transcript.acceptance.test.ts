// episodes that carry the session: a continuation gives the model the earlier run's tool calls and results, not just
// its task and answer; proved through the built CLI against the stand-in
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { systemOf } from '#standin/requestParts.js';
import type { StandinTurn } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
let home: string;
let cwd: string;
beforeEach(async () => {
  home = tempDir('bhrain-transcript-home-');
  cwd = tempDir('bhrain-transcript-cwd-');
  // what only the tools can tell: the file's content (read) and a file's name (ls)
  await writeFile(join(cwd, 'notes.txt'), 'buy milk for HERON-7\n');
  await writeFile(join(cwd, 'listed-only-by-ls-OSPREY.txt'), '');
});
const envIn = (storeHome: string) => genCliEnv({ standin: standin(), home: storeHome });

/** the task and the answer of run 1: neither says what the tools returned */
const TASK = 'tidy the notes';
const ANSWER = 'Done: I looked at the notes.';
const LOOKED: StandinTurn = {
  text: 'Let me look first.',
  toolCalls: [
    { name: 'read', input: { path: 'notes.txt' } },
    { name: 'bash', input: { command: 'ls' } },
  ],
};

/** `bhrain act` with the given flags and model turns: its exit code, stderr and JSON result */
const act = async (input: { args: string[]; turns: StandinTurn[]; atom?: string; storeHome?: string }) => {
  standin().script(...input.turns);
  const run = await runBhrain({
    args: ['act', '--atom', input.atom ?? 'qwen', '--sandbox', 'off', '--output', 'json', ...input.args],
    cwd,
    env: envIn(input.storeHome ?? home),
  });
  return { ...run, json: run.stdout ? JSON.parse(run.stdout) : null };
};

/** run 1: reads notes.txt and runs ls, then answers */
const runOne = async (input: { atom?: string; storeHome?: string } = {}) => {
  const run = await act({ ...input, args: ['--input', TASK], turns: [LOOKED, { text: ANSWER }] });
  expect(run.code).toBe(0);
  return run;
};

/** the first request a continuation sent, as text, and what it must hold: run 1's calls, inputs and results */
const expectRunOneInFirstRequest = (requestIndex: number) => {
  // the conversation only (not the system prompt and the tools), so a failure shows what was sent in few lines
  const sent = JSON.stringify(standin().requests[requestIndex].body.messages);
  // the tool calls with their inputs
  expect(sent).toContain('[tool call 1] read {\\"path\\":\\"notes.txt\\"}');
  expect(sent).toContain('[tool call 2] bash {\\"command\\":\\"ls\\"}');
  // their results, as the model read them
  expect(sent).toContain('buy milk for HERON-7');
  expect(sent).toContain('listed-only-by-ls-OSPREY.txt');
  // and the two ends
  expect(sent).toContain(TASK);
  expect(sent).toContain(ANSWER);
  return sent;
};

const CONTINUE = 'what did you run and read?';

describe('episodes carry the session: continue keeps the transcript', () => {
  it('episodes carry the session: --continue (and --resume, --on-episode) sends run 1 (read + ls) with its tool calls and results in the first request', async () => {
    const first = await runOne();
    const before = standin().requests.length;
    const run = await act({ args: ['--continue', '--input', CONTINUE], turns: [{ text: 'I read notes.txt and ran ls.' }] });
    expect(run.code).toBe(0);
    expectRunOneInFirstRequest(before);
    // --resume and --on-episode rebuild the same context
    const resumed = await act({ args: ['--resume', run.json.runId, '--input', CONTINUE], turns: [{ text: 'again' }] });
    expect(resumed.code).toBe(0);
    expectRunOneInFirstRequest(before + 1);
    const branched = await act({ args: ['--on-episode', first.json.episode.hash, '--input', CONTINUE], turns: [{ text: 'again' }] });
    expect(branched.code).toBe(0);
    expectRunOneInFirstRequest(before + 2);
    // and bhrain show prints the turn with its tool calls from the ref itself, once the run records are pruned
    await rm(join(home, 'runs'), { recursive: true });
    const shown = await runBhrain({ args: ['show', first.json.episode.hash], cwd, env: envIn(home) });
    expect(shown.stdout).toContain(
      '── tool calls ──\nLet me look first.\n[tool call 1] read {"path":"notes.txt"}\n[result of tool call 1]\n',
    );
  });

  it('episodes carry the session: --on-series @file from bhrain export, under another BHRAIN_HOME, sends the same transcript', async () => {
    const first = await runOne();
    const exported = await runBhrain({ args: ['export', first.json.series.hash], cwd, env: envIn(home) });
    expect(exported.code).toBe(0);
    const file = join(tempDir('bhrain-transcript-artifact-'), 'series.json');
    await writeFile(file, exported.stdout);
    // the file holds the steps: the ref itself carries the session, not the run record
    expect(JSON.parse(exported.stdout).episodes[0].exchanges[0].steps[0].calls.map((call: { name: string }) => call.name)).toEqual([
      'read',
      'bash',
    ]);

    const before = standin().requests.length;
    const elsewhere = tempDir('bhrain-transcript-other-home-');
    const run = await act({ args: ['--on-series', `@${file}`, '--input', CONTINUE], turns: [{ text: 'ok' }], storeHome: elsewhere });
    expect(run.code).toBe(0);
    expectRunOneInFirstRequest(before);
  });

  it('episodes carry the session: across suppliers (claude, then qwen) the transcript arrives as text, in the prior assistant turn', async () => {
    await runOne({ atom: 'claude' });
    const before = standin().requests.length;
    const run = await act({ atom: 'qwen', args: ['--continue', '--input', CONTINUE], turns: [{ text: 'ok' }] });
    expect(run.code).toBe(0);
    expectRunOneInFirstRequest(before);
    // qwen's request: plain user and assistant turns, no native tool turns from claude's run
    const messages = standin().requests[before].body.messages as Array<{ role: string; content: string; tool_calls?: unknown }>;
    expect(messages.some((message) => message.role === 'tool' || message.tool_calls)).toBe(false);
    const prior = messages.find((message) => message.role === 'assistant');
    expect(prior?.content).toContain('[result of tool call 1]');
    expect(prior?.content).toContain('buy milk for HERON-7');
    expect(prior?.content.endsWith(ANSWER)).toBe(true);
  });

  it('episodes carry the session: two runs with the same task and answer, one ls + read and one rm, get different hashes', async () => {
    const looked = await runOne();
    const removed = await act({
      args: ['--input', TASK],
      turns: [{ text: 'Let me look first.', toolCalls: [{ name: 'bash', input: { command: 'rm notes.txt' } }] }, { text: ANSWER }],
    });
    expect(removed.code).toBe(0);
    expect(removed.json.output).toBe(looked.json.output);
    expect(removed.json.episode.hash).not.toBe(looked.json.episode.hash);
    expect(removed.json.series.hash).not.toBe(looked.json.series.hash);
  });

  it('episodes carry the session: an old (schemaVersion 2) ref still continues, with its hash, as the two ends it holds', async () => {
    const stored = JSON.parse(await readFile(join(PACKAGE_ROOT, 'test', 'fixtures', 'refs', 'series-v2.json'), 'utf8'));
    // in the store, as an older bhrain saved it
    await mkdir(join(home, 'refs', 'series'), { recursive: true });
    await copyFile(join(PACKAGE_ROOT, 'test', 'fixtures', 'refs', 'series-v2.json'), join(home, 'refs', 'series', `${stored.hash}.json`));
    for (const on of [stored.hash, `@${join(PACKAGE_ROOT, 'test', 'fixtures', 'refs', 'series-v2.json')}`]) {
      const before = standin().requests.length;
      const run = await act({
        args: ['--on-series', on, '--input', 'what is the codename and the port?'],
        turns: [{ text: 'HERON, 7070' }],
      });
      expect(run.code).toBe(0);
      // read as is: no notice of a changed hash
      expect(run.stderr).not.toContain('older bhrain');
      const sent = standin().requests[before].body.messages as Array<{ role: string; content: string }>;
      expect(sent.slice(-5)).toEqual([
        { role: 'user', content: 'the codename is HERON' },
        { role: 'assistant', content: 'Noted: HERON.' },
        { role: 'user', content: 'and the port is 7070' },
        { role: 'assistant', content: 'Noted: 7070.' },
        expect.objectContaining({ role: 'user' }),
      ]);
    }
  });

  it('episodes carry the session: a rebuilt transcript that fills the window is compacted into a recap first, and stderr says what was compacted', async () => {
    // an unknown qwen model: a 32k window; the repl recaps an episode past 60% of it (~78,000 characters)
    for (let n = 1; n <= 3; n++) await writeFile(join(cwd, `big${n}.txt`), `${`file ${n} `.padEnd(70, 'x')}\n`.repeat(380));
    standin().respond = (request) =>
      systemOf(request).includes('You compact') ? { text: 'RECAP: the model read big1.txt, big2.txt and big3.txt' } : undefined;
    const small = ['--model', 'standin-32k'];
    const first = await act({
      args: [...small, '--input', 'read the big files'],
      turns: [{ toolCalls: [1, 2, 3].map((n) => ({ name: 'read', input: { path: `big${n}.txt` } })) }, { text: 'read them' }],
    });
    expect(first.code).toBe(0);

    const before = standin().requests.length;
    const run = await act({ args: [...small, '--continue', '--input', CONTINUE], turns: [{ text: 'ok' }] });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `warning: \\S+: the episode ${first.json.episode.hash} \\(1 exchange, 3 tool calls\\) fills the context window, so it was compacted into a recap of \\d+ characters before this request; the series continues in episode ${run.json.series.hash ? '[0-9a-f]{64}' : ''}`,
      ),
    );
    // the summarizer read the turn whole, its tool calls included; the model then got the recap, not the files
    const requests = standin().requests.slice(before);
    const recaps = requests.filter((request) => systemOf(request).includes('You compact a conversation'));
    for (const call of ['[tool call 1] read', '[tool call 3] read', 'file 3 xxx'])
      expect(recaps.some((request) => JSON.stringify(request.body.messages).includes(call))).toBe(true);
    const asked = JSON.stringify(requests.at(-1)?.body.messages);
    expect(asked).toContain('RECAP: the model read big1.txt, big2.txt and big3.txt');
    expect(asked).not.toContain('file 1 xxx');
    expect(run.json.series.hash).not.toBe(first.json.series.hash);
  });
});

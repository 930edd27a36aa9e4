// reliability: LLM faults on both wire protocols, through the real SDKs over HTTP against the stand-in, at the library
// and at the CLI. Every fault ends in a retry that succeeds, or in a clear termination that keeps the partial
// transcript and a ref to resume from; never a hang, never an unhandled rejection.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect } from 'vitest';

import { EMPTY_ANSWER_NUDGE } from '../../src/agent/constants.js';
import type { BhrainContext } from '../../src/agent/BhrainContext.js';
import { invoke } from '../../src/agent/genBhrain.js';
import type { BhrainToolBox } from '../../src/agent/tool/BhrainToolBox.js';
import { withIdleTimeout } from '../../src/providers/withIdleTimeout.js';
import { genBrainRefStore } from '../../src/core/continuation/genBrainRefStore.js';
import type { BrainMessage } from '../../src/core/contract/BrainMessage.js';
import { EmptyAnswerError, SupplierUnavailableError } from '../../src/core/contract/errors.js';
import { genCliEnv, runBhrain } from '../acceptance/runCli.js';
import type { StandinTurn } from '#standin/standin.js';
import { genRecordingLog, PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { reliabilityCase } from './reliabilityCase.js';
import { toolResults } from '#test-helpers/transcript.js';
import { tempDir } from '#test-helpers/fs.js';

// never an unhandled rejection: vitest fails the run on one already; this also names it, and the last case asserts none
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

const { standin, contextFor } = useStandin();

/** fast, bounded retries: 4 attempts in all, waits of 5–20 ms */
const RETRY = { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 3_000 };
/** the arguments of a tool call whose JSON the stand-in splits over several deltas */
const FULL_WRITE = { path: 'notes/plan.md', content: 'the whole content of the plan, long enough to be streamed in several deltas' };

/** a toolbox that records every execution with its input; `write_file` has the name the stand-in's cut tool call uses */
const genProbeToolBox = (): BhrainToolBox & { runs: Array<{ name: string; input: unknown }> } => {
  const runs: Array<{ name: string; input: unknown }> = [];
  return {
    name: 'probe',
    runs,
    definitions: [
      { name: 'probe', description: 'returns its n', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } },
      {
        name: 'write_file',
        description: 'records a write',
        inputSchema: {
          type: 'object',
          properties: { path: { type: 'string' }, content: { type: 'string' } },
          required: ['path', 'content'],
        },
      },
    ],
    execute: async ({ call }) => {
      runs.push({ name: call.name, input: call.input });
      return { callId: call.id, success: true, output: `probe ran ${call.name} ${JSON.stringify(call.input)}` };
    },
  };
};

/** one library session on `slug` over the stand-in, with fast retries; returns the result, the probe, the log and the time taken */
const runSession = async (input: {
  slug: string;
  turns?: StandinTurn[];
  maxIterations?: number;
  context?: BhrainContext;
  prompt?: string;
}) => {
  const probe = genProbeToolBox();
  const { lines, log } = genRecordingLog();
  standin().script(...(input.turns ?? []));
  const started = performance.now();
  const result = await invoke(
    { config: { atom: input.slug, toolBoxes: [probe], maxIterations: input.maxIterations }, prompt: input.prompt ?? 'do the task' },
    contextFor({ retry: RETRY, log, ...input.context }),
  );
  return { result, probe, lines, elapsedMs: performance.now() - started };
};

const retryWarnings = (lines: ReturnType<typeof genRecordingLog>['lines']) =>
  lines.filter((line) => line.level === 'warn' && /attempt \d+ failed/.test(line.message));

describe.each(PROTOCOL_SLUGS)('LLM faults at the library on $slug ($protocol protocol): retryable statuses and retry-after', ({ slug }) => {
  describe('bursts of retryable statuses', () => {
    const bursts = [429, 529, 500].flatMap((status) => [
      { status, retryAfter: true },
      { status, retryAfter: false },
    ]);
    for (const { status, retryAfter } of bursts)
      reliabilityCase(
        `a burst of three ${status}s ${retryAfter ? 'with' : 'without'} retry-after, after a tool call ran, is retried and the session completes`,
        async () => {
          const error = { status, ...(retryAfter ? { retryAfterMs: 40 } : {}) };
          const { result, probe, lines, elapsedMs } = await runSession({
            slug,
            turns: [{ toolCalls: [{ name: 'probe', input: { n: 1 } }] }, { error }, { error }, { error }, { text: 'done after the burst' }],
          });
          expect(result.error).toBeNull();
          expect(result.termination).toBe('complete');
          expect(result.output).toBe('done after the burst');
          expect(probe.runs).toEqual([{ name: 'probe', input: { n: 1 } }]);
          expect(standin().requests).toHaveLength(5);
          // the retried request still carries the tool result, so nothing said before the burst was lost
          expect(JSON.stringify(standin().requests[4].body.messages)).toContain('probe ran probe {\\"n\\":1}');
          const warnings = retryWarnings(lines);
          expect(warnings).toHaveLength(3);
          for (const warning of warnings) {
            expect(warning.message).toContain(`HTTP ${status}`);
            // retry-after is honoured as asked; without it the backoff stays within the policy
            if (retryAfter) expect(warning.meta?.delayMs).toBe(40);
            else expect(warning.meta?.delayMs).toBeLessThanOrEqual(RETRY.maxDelayMs);
          }
          expect(elapsedMs).toBeLessThan(2_000);
        },
        5_000,
      );
  });

  reliabilityCase(
    'a burst longer than the retries ends with SupplierUnavailableError, the tool call and its result kept, without hanging',
    async () => {
      standin().script({ text: 'looking first', toolCalls: [{ name: 'probe', input: { n: 7 } }] });
      const { result, probe, elapsedMs } = await runSession({
        slug,
        turns: [
          { error: { status: 503 } },
          { error: { status: 529 } },
          { error: { status: 429 } },
          { error: { status: 500 } },
          { text: 'never reached' },
        ],
      });
      expect(result.termination).toBe('error');
      expect(result.error).toBeInstanceOf(SupplierUnavailableError);
      expect((result.error as SupplierUnavailableError).attempts).toBe(4);
      expect(result.error?.message).toMatch(/failed 4 times in a row \(last: HTTP 500/);
      expect(result.iterations).toBe(1);
      expect(result.output).toBe('looking first');
      expect(probe.runs).toHaveLength(1);
      // the partial transcript: prompt, the assistant's tool call, its result
      expect(result.transcript.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
      expect(result.transcript[1]).toMatchObject({ content: 'looking first', toolCalls: [{ name: 'probe', input: { n: 7 } }] });
      expect(toolResults(result)[0].content).toBe('probe ran probe {"n":7}');
      expect(standin().requests).toHaveLength(5);
      expect(standin().pending()).toBe(1);
      expect(elapsedMs).toBeLessThan(2_000);
    },
    5_000,
  );

  reliabilityCase(
    'a retry-after in whole seconds (the standard header) is honoured before the retry',
    async () => {
      const { result, lines, elapsedMs } = await runSession({
        slug,
        turns: [{ error: { status: 429, retryAfterSeconds: 1 } }, { text: 'after waiting' }],
      });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('after waiting');
      expect(retryWarnings(lines).map((line) => line.meta?.delayMs)).toEqual([1_000]);
      expect(elapsedMs).toBeGreaterThanOrEqual(990);
      expect(elapsedMs).toBeLessThan(2_000);
    },
    5_000,
  );

  reliabilityCase(
    'a retry-after beyond the retry budget fails at once instead of waiting',
    async () => {
      const { result, elapsedMs } = await runSession({ slug, turns: [{ error: { status: 429, retryAfterSeconds: 3_600 } }] });
      expect(result.termination).toBe('error');
      expect(result.error).toBeInstanceOf(SupplierUnavailableError);
      expect(result.error?.message).toMatch(/asked to retry after 3600\.0 s, beyond the remaining retry budget/);
      expect(standin().requests).toHaveLength(1);
      expect(elapsedMs).toBeLessThan(1_000);
    },
    5_000,
  );
});

describe.each(PROTOCOL_SLUGS)('LLM faults at the library on $slug ($protocol protocol): resets, cut streams, bad bodies', ({ slug }) => {
  reliabilityCase(
    'a connection reset before any byte is retried and the session completes',
    async () => {
      const { result, lines } = await runSession({ slug, turns: [{ reset: true }, { text: 'answer after a reset' }] });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('answer after a reset');
      expect(standin().requests).toHaveLength(2);
      expect(retryWarnings(lines)).toHaveLength(1);
    },
    5_000,
  );

  reliabilityCase(
    'a stream cut mid text is retried, and only the whole answer of the retry is kept',
    async () => {
      const { result } = await runSession({ slug, turns: [{ cut: 'text' }, { text: 'the whole answer' }] });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('the whole answer');
      expect(result.transcript.filter((message) => message.role === 'assistant')).toHaveLength(1);
      expect(JSON.stringify(result.transcript)).not.toContain('cut off somewhere');
    },
    5_000,
  );

  reliabilityCase(
    'a stream cut mid tool-call JSON is retried; the tool runs exactly once, with the full input of the retry',
    async () => {
      const { result, probe } = await runSession({
        slug,
        turns: [{ cut: 'tool' }, { toolCalls: [{ name: 'write_file', input: FULL_WRITE }] }, { text: 'written' }],
      });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('written');
      expect(probe.runs).toEqual([{ name: 'write_file', input: FULL_WRITE }]);
      const calls = result.transcript.flatMap((message) => (message.role === 'assistant' ? message.toolCalls : []));
      expect(calls).toHaveLength(1);
      expect(calls[0].inputError).toBeUndefined();
      expect(standin().requests).toHaveLength(3);
    },
    5_000,
  );

  reliabilityCase(
    'a text callback that throws is logged, and a healthy answer is neither re-requested nor blamed on the supplier',
    async () => {
      let calls = 0;
      const onTextDelta = () => {
        calls++;
        throw new Error('the caller renders badly');
      };
      const { result, lines } = await runSession({
        slug,
        turns: [{ text: 'a healthy answer in several deltas' }],
        context: { onTextDelta },
      });
      expect(result.error).toBeNull();
      expect(result.output).toBe('a healthy answer in several deltas');
      expect(standin().requests).toHaveLength(1);
      expect(calls).toBeGreaterThan(1);
      expect(
        lines.some((line) => line.level === 'error' && line.message.includes('onTextDelta callback threw: the caller renders badly')),
      ).toBe(true);
    },
    5_000,
  );

  reliabilityCase(
    'a 200 with an invalid body is retried and the session completes',
    async () => {
      const { result } = await runSession({ slug, turns: [{ invalidBody: true }, { text: 'a readable answer' }] });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('a readable answer');
      expect(standin().requests).toHaveLength(2);
    },
    5_000,
  );

  reliabilityCase(
    'a 200 with an invalid body every time ends with a clear SupplierUnavailableError after the bounded retries',
    async () => {
      standin().respond = () => ({ invalidBody: true });
      const { result, elapsedMs } = await runSession({ slug });
      expect(result.termination).toBe('error');
      expect(result.error).toBeInstanceOf(SupplierUnavailableError);
      expect(result.error?.message).toMatch(/failed 4 times in a row/);
      expect(result.transcript.map((message) => message.role)).toEqual(['user']);
      expect(standin().requests).toHaveLength(4);
      expect(elapsedMs).toBeLessThan(2_000);
    },
    5_000,
  );
});

describe.each(PROTOCOL_SLUGS)('LLM faults at the library on $slug ($protocol protocol): slow and stalled responses', ({ slug }) => {
  reliabilityCase(
    'a response slower than the request timeout is abandoned and retried; the fast retry completes',
    async () => {
      const { result, elapsedMs } = await runSession({
        slug,
        turns: [{ delayMs: 2_000, then: { text: 'too late' } }, { text: 'fast enough' }],
        context: { timeoutMs: 300 },
      });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('fast enough');
      expect(standin().requests).toHaveLength(2);
      expect(elapsedMs).toBeGreaterThanOrEqual(290);
      expect(elapsedMs).toBeLessThan(1_500);
    },
    5_000,
  );

  reliabilityCase(
    'a response that is always slower than the request timeout ends with a clear error within a bounded time',
    async () => {
      standin().respond = () => ({ delayMs: 2_000, then: { text: 'too late' } });
      const { result, elapsedMs } = await runSession({ slug, context: { timeoutMs: 300 } });
      expect(result.termination).toBe('error');
      expect(result.error).toBeInstanceOf(SupplierUnavailableError);
      expect(result.error?.message).toMatch(/failed 4 times in a row \(last: .*tim/i);
      expect(standin().requests).toHaveLength(4);
      // 4 attempts × 300 ms + small backoffs: never the 2 s the supplier would take, let alone a hang
      expect(elapsedMs).toBeGreaterThanOrEqual(4 * 290);
      expect(elapsedMs).toBeLessThan(2_500);
    },
    6_000,
  );

  for (const stall of ['text', 'tool'] as const)
    reliabilityCase(
      `a stream that stalls mid ${stall === 'text' ? 'text' : 'tool-call JSON'} is abandoned by the idle timeout and retried`,
      async () => {
        const retried: StandinTurn[] =
          stall === 'text'
            ? [{ text: 'the whole answer' }]
            : [{ toolCalls: [{ name: 'write_file', input: FULL_WRITE }] }, { text: 'the whole answer' }];
        const { result, probe, lines, elapsedMs } = await runSession({ slug, turns: [{ stall }, ...retried], context: { timeoutMs: 300 } });
        expect(result.termination).toBe('complete');
        expect(result.output).toBe('the whole answer');
        expect(retryWarnings(lines)[0]?.message).toMatch(/stalled: no data for 300 ms/);
        // a stalled tool call is never run half-parsed: only the retry's full call ran
        expect(probe.runs).toEqual(stall === 'tool' ? [{ name: 'write_file', input: FULL_WRITE }] : []);
        expect(elapsedMs).toBeGreaterThanOrEqual(290);
        expect(elapsedMs).toBeLessThan(1_500);
      },
      5_000,
    );

  reliabilityCase(
    'a stream that always stalls midway ends with a clear error naming the stall, within a bounded time',
    async () => {
      standin().respond = () => ({ stall: 'text' });
      const { result, elapsedMs } = await runSession({ slug, context: { timeoutMs: 250 } });
      expect(result.termination).toBe('error');
      expect(result.error).toBeInstanceOf(SupplierUnavailableError);
      expect(result.error?.message).toMatch(/failed 4 times in a row \(last: the response stream stalled: no data for 250 ms\)/);
      expect(standin().requests).toHaveLength(4);
      expect(elapsedMs).toBeGreaterThanOrEqual(4 * 240);
      expect(elapsedMs).toBeLessThan(2_500);
    },
    6_000,
  );
});

describe.each(PROTOCOL_SLUGS)('LLM faults at the library on $slug ($protocol protocol): loops and empty answers', ({ slug }) => {
  reliabilityCase(
    'a model that calls the same tool forever stops at max-iterations with its partial answer, told it is looping after 3 calls',
    async () => {
      standin().respond = () => ({ text: 'still checking', toolCalls: [{ name: 'probe', input: { n: 1 } }] });
      const { result, probe, elapsedMs } = await runSession({ slug, maxIterations: 5 });
      expect(result.termination).toBe('max-iterations');
      expect(result.error).toBeNull();
      expect(result.iterations).toBe(5);
      expect(result.output).toMatch(/^still checking\n\n\[bhrain stopped after 5 iterations \(maxIterations\)/);
      expect(probe.runs).toHaveLength(5);
      expect(standin().requests).toHaveLength(5);
      const notices = toolResults(result).map(
        (message) => /this is call (\d+) in a row to probe with the same arguments/.exec(message.content)?.[1] ?? null,
      );
      expect(notices).toEqual([null, null, '3', '4', '5']);
      // the model read the notice: the 4th request carries the 3rd result with it
      expect(JSON.stringify(standin().requests[3].body.messages)).toContain('this is call 3 in a row to probe');
      expect(elapsedMs).toBeLessThan(2_000);
    },
    5_000,
  );

  reliabilityCase(
    'a model that returns an empty message once is nudged, then answers',
    async () => {
      const { result } = await runSession({ slug, turns: [{ text: '' }, { text: 'the real answer' }] });
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('the real answer');
      expect(result.iterations).toBe(2);
      expect(JSON.stringify(standin().requests[1].body.messages)).toContain(EMPTY_ANSWER_NUDGE.slice(0, 40));
    },
    5_000,
  );

  reliabilityCase(
    'a model that returns an empty message twice in a row ends with EmptyAnswerError, the transcript kept',
    async () => {
      const { result } = await runSession({
        slug,
        turns: [{ toolCalls: [{ name: 'probe', input: { n: 2 } }] }, { text: '' }, { text: '' }, { text: 'never asked' }],
      });
      expect(result.termination).toBe('error');
      expect(result.error).toBeInstanceOf(EmptyAnswerError);
      expect(result.error?.message).toMatch(/returned an empty answer twice in a row/);
      expect(result.iterations).toBe(3);
      expect(toolResults(result).map((message) => message.content)).toEqual(['probe ran probe {"n":2}']);
      expect(result.transcript.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
        'do the task',
        EMPTY_ANSWER_NUDGE,
      ]);
      expect(standin().requests).toHaveLength(3);
    },
    5_000,
  );

  reliabilityCase(
    'two empty messages that are not in a row (work in between) are each nudged, and the session completes',
    async () => {
      const { result, probe } = await runSession({
        slug,
        turns: [{ text: '' }, { toolCalls: [{ name: 'probe', input: { n: 3 } }] }, { text: '' }, { text: 'finished' }],
      });
      expect(result.error).toBeNull();
      expect(result.termination).toBe('complete');
      expect(result.output).toBe('finished');
      expect(probe.runs).toHaveLength(1);
      expect(result.transcript.filter((message) => message.role === 'user' && message.content === EMPTY_ANSWER_NUDGE)).toHaveLength(2);
    },
    5_000,
  );
});

describe.each(PROTOCOL_SLUGS)('LLM faults at the CLI (bin/bhrain) on $slug ($protocol protocol)', ({ slug }) => {
  let home: string;
  beforeEach(async () => {
    home = tempDir('bhrain-faults-home-');
  });
  const env = () => genCliEnv({ standin: standin(), home });
  const act = async (args: string[]) => {
    const cwd = tempDir('bhrain-faults-cwd-');
    const started = performance.now();
    const run = await runBhrain({ args: ['act', '--atom', slug, ...args], cwd, env: env() });
    return { ...run, cwd, elapsedMs: performance.now() - started };
  };
  const refsOf = (stderr: string) => ({
    episode: /^episode: ([0-9a-f]{64})$/m.exec(stderr)?.[1],
    series: /^series: ([0-9a-f]{64})$/m.exec(stderr)?.[1],
  });

  /** the printed series is in the store, and a second run on it succeeds and sends the first run's input and what ended it */
  const expectResumable = async (input: { stderr: string; firstInput: string; ending: string }) => {
    const refs = refsOf(input.stderr);
    expect(refs.episode).toBeDefined();
    expect(refs.series).toBeDefined();
    const saved = await genBrainRefStore({ home }).getSeries(refs.series!);
    expect(saved.hash).toBe(refs.series);
    standin().reset();
    standin().script({ text: 'resumed and done' });
    const resumed = await act(['--on-series', refs.series!, '--input', 'try again from where it stopped']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('resumed and done\n');
    const sent = JSON.stringify(standin().requests[0].body.messages);
    expect(sent).toContain(input.firstInput);
    expect(sent).toContain(JSON.stringify(input.ending).slice(1, -1));
    expect(sent).toContain('try again from where it stopped');
  };

  reliabilityCase(
    'a burst of 500s that outlasts the retries exits 4 with the refs printed, and the series resumes with the error recorded',
    async () => {
      // retry-after-ms: 1 keeps the CLI's default policy (5 attempts, waits of seconds) fast; the budget is what is tested
      standin().script(
        { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] },
        ...Array.from({ length: 5 }, () => ({ error: { status: 500, retryAfterMs: 1 } })),
      );
      const run = await act(['--input', 'list the files then summarize']);
      expect(run.stderr).toMatch(/failed 5 times in a row \(last: HTTP 500/);
      expect(run.code).toBe(4);
      expect(standin().requests).toHaveLength(6);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.elapsedMs).toBeLessThan(10_000);
      // the run record keeps the partial transcript: the tool call that ran before the burst, and its result
      const [id] = await readdir(join(home, 'runs'));
      const transcript = JSON.parse(await readFile(join(home, 'runs', id, 'transcript.json'), 'utf8'));
      expect(transcript.map((message: BrainMessage) => message.role)).toEqual(['user', 'assistant', 'tool']);
      expect(transcript[1].toolCalls).toMatchObject([{ name: 'glob', input: { pattern: '*' } }]);
      await expectResumable({
        stderr: run.stderr,
        firstInput: 'list the files then summarize',
        ending: '[bhrain: this exchange ended with an error: ',
      });
    },
    30_000,
  );

  reliabilityCase(
    'a model that calls tools forever exits 3 at --max-iterations 3, the runaway notice in the record, and the series resumes',
    async () => {
      standin().respond = () => ({ text: 'globbing again', toolCalls: [{ name: 'glob', input: { pattern: '*' } }] });
      const run = await act(['--max-iterations', '3', '--input', 'find the config forever']);
      expect(run.code).toBe(3);
      // stdout has the model's text alone; the stop is said on stderr, and to the model in the series (below)
      expect(run.stdout).toBe('globbing again\n');
      expect(run.stderr).toMatch(
        /^bhrain act: stopped after 3 iterations, before the task was complete\. The answer on stdout is partial\./m,
      );
      expect(standin().requests).toHaveLength(3);
      const [id] = await readdir(join(home, 'runs'));
      const transcript = await readFile(join(home, 'runs', id, 'transcript.json'), 'utf8');
      expect(transcript).toContain('this is call 3 in a row to glob with the same arguments');
      standin().respond = null;
      await expectResumable({ stderr: run.stderr, firstInput: 'find the config forever', ending: '[bhrain stopped after 3 iterations' });
    },
    30_000,
  );

  reliabilityCase(
    'a model that answers empty twice exits 4 with EmptyAnswerError, and the series resumes with the error recorded',
    async () => {
      standin().script({ text: '' }, { text: '' });
      const run = await act(['--input', 'say something']);
      expect(run.stderr).toMatch(/returned an empty answer twice in a row/);
      expect(run.code).toBe(4);
      expect(run.stdout).toBe('');
      await expectResumable({ stderr: run.stderr, firstInput: 'say something', ending: '[bhrain: this exchange ended with an error: ' });
    },
    30_000,
  );
});

describe('the idle-timeout stream wrapper', () => {
  /** a stream that yields two events, then stalls forever, like a supplier that stops mid-answer */
  async function* twoThenStall() {
    yield 'first';
    yield 'second';
    await new Promise(() => {});
  }
  async function* twoEvents() {
    yield 'a';
    yield 'b';
  }

  reliabilityCase(
    'a reader that stops early (a malformed event, a throwing callback) aborts the request behind the stream',
    async () => {
      let aborts = 0;
      const stream = withIdleTimeout({ stream: twoThenStall(), idleMs: 60_000, abort: () => void aborts++ });
      const read = await (async () => {
        for await (const event of stream) if (event === 'first') throw new Error('cannot read this event');
      })().catch((error: Error) => error.message);
      expect(read).toBe('cannot read this event');
      // without the abort the connection stays open behind the abandoned stream until the supplier closes it
      expect(aborts).toBe(1);
    },
    2_000,
  );

  reliabilityCase(
    'a stream that stalls fails after the idle limit and aborts once; one read to its end never aborts',
    async () => {
      let aborts = 0;
      const started = performance.now();
      const stalled = (async () => {
        for await (const _ of withIdleTimeout({ stream: twoThenStall(), idleMs: 100, abort: () => void aborts++ }));
      })().catch((error: Error) => error.message);
      expect(await stalled).toBe('the response stream stalled: no data for 100 ms');
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(aborts).toBe(1);

      let completeAborts = 0;
      const seen: string[] = [];
      for await (const event of withIdleTimeout({ stream: twoEvents(), idleMs: 100, abort: () => void completeAborts++ })) seen.push(event);
      expect(seen).toEqual(['a', 'b']);
      expect(completeAborts).toBe(0);
    },
    2_000,
  );
});

describe('never an unhandled rejection', () => {
  reliabilityCase(
    'no unhandled rejection was raised by any fault above',
    async () => {
      // late rejections (aborted streams, timers) surface within a few turns of the event loop
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    },
    2_000,
  );
});

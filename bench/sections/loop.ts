import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import {
  genBhrain,
  genBrainAtom,
  genBrainRepl,
  nodeHttpFetch,
  type BhrainContext,
  type BhrainMemoryManager,
  type BhrainToolBox,
  type BrainAtom,
  type BrainLog,
} from 'rhachet-roles-bhrain';

import { startStandin, type Standin, type StandinRequest } from '../../test/standin/standin.js';
import { ratio, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';

/** tool iterations per loop run (each answered by the stand-in with one call to the no-op tool) */
const LOOP_TOOL_RESULTS = { full: 1_000, smoke: 20 } as const;

/** repl calls measured for heap growth, after the warm-up */
const HEAP_CALLS = { full: 1_000, smoke: 50 } as const;
const HEAP_WARMUP_CALLS = { full: 100, smoke: 10 } as const;

/** the targets */
const LOOP_TARGET_MS = 1;
const HEAP_TARGET_MB = 5;

/** the loop subjects: one atom per wire protocol */
const SUBJECTS = [
  { name: 'claude', slug: 'claude/haiku' },
  { name: 'qwen', slug: 'qwen/qwen-plus' },
] as const;

const silentLog: BrainLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** .what = a memory manager that never replaces the context, so the history grows with every iteration */
const neverCompact: BhrainMemoryManager = {
  name: 'bench-never',
  shouldUpdate: () => false,
  getUpdate: () => ({ shouldUpdate: false }),
};

/** .what = tool results the request carries, in either protocol's shape */
const countToolResults = (request: StandinRequest): number => {
  const messages: any[] = Array.isArray(request.body?.messages) ? request.body.messages : [];
  if (request.protocol === 'openai') return messages.filter((message) => message?.role === 'tool').length;
  return messages.reduce(
    (count, message) =>
      count + (Array.isArray(message?.content) ? message.content.filter((block: any) => block?.type === 'tool_result').length : 0),
    0,
  );
};

/**
 * .what = a context that points both atoms at the stand-in, quietly, sending with the fetch given (absent: the SDK's own,
 *         node's global fetch)
 */
const standinContext = (standin: Standin, fetch?: typeof globalThis.fetch): BhrainContext => ({
  creds: { anthropic: { apiKey: 'x', url: standin.url }, qwen: { apiKey: 'x', url: standin.openaiUrl } },
  env: {},
  log: silentLog,
  fetch,
});

/** .what = the mean of a slice of numbers (0 when empty) */
const mean = (values: readonly number[]): number => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0);

const round = (value: number, digits = 3): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * .what = one loop run of `toolResults` tool iterations then a final answer, with generate and tool time taken out
 * .why = what is left of the wall time is the loop's own work: history, permission, events, memory consultation
 */
const measureLoop = async (input: { slug: string; toolResults: number; standin: Standin; fetch?: typeof globalThis.fetch }) => {
  const { standin, toolResults } = input;
  standin.reset();
  standin.respond = (request) => {
    const carried = countToolResults(request);
    // the request log holds every growing body: keep it empty, the loop's memory is what matters here
    standin.requests.length = 0;
    return carried < toolResults ? { toolCalls: [{ name: 'noop', input: { n: carried } }] } : { text: 'done' };
  };

  const atom: BrainAtom = genBrainAtom({ slug: input.slug });
  const generateStartedAt: number[] = [];
  const generateMs: number[] = [];
  const toolMs: number[] = [];
  const timedAtom: BrainAtom = {
    ...atom,
    generate: async (request, context) => {
      const started = performance.now();
      generateStartedAt.push(started);
      try {
        return await atom.generate(request, context);
      } finally {
        generateMs.push(performance.now() - started);
      }
    },
  };
  const noopBox: BhrainToolBox = {
    name: 'bench-noop',
    definitions: [
      {
        name: 'noop',
        description: 'Does nothing and says ok.',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } }, additionalProperties: false },
      },
    ],
    execute: async ({ call }) => {
      const started = performance.now();
      try {
        return { callId: call.id, success: true, output: 'ok' };
      } finally {
        toolMs[generateStartedAt.length - 1] = (toolMs[generateStartedAt.length - 1] ?? 0) + performance.now() - started;
      }
    },
  };

  const brain = genBhrain({ atom: timedAtom, toolBoxes: [noopBox], maxIterations: toolResults + 10, memoryManager: neverCompact });
  const started = performance.now();
  const result = await brain.invoke({ prompt: 'Call noop until told to stop.' }, standinContext(standin, input.fetch));
  const ended = performance.now();
  standin.respond = null;
  standin.requests.length = 0;
  if (result.termination !== 'complete' || result.iterations !== toolResults + 1)
    throw new Error(
      `loop on ${input.slug} ended ${result.termination} after ${result.iterations} iterations, expected complete after ${toolResults + 1}: ${result.error?.message ?? result.output}`,
    );

  // iteration i spans from its generate call to the next one (the last: to the end of invoke)
  const perIteration = generateStartedAt.map((at, index) => {
    const span = (generateStartedAt[index + 1] ?? ended) - at;
    return span - generateMs[index] - (toolMs[index] ?? 0);
  });
  const wallMs = ended - started;
  const totalGenerateMs = generateMs.reduce((sum, value) => sum + value, 0);
  const totalToolMs = toolMs.reduce((sum, value) => sum + (value ?? 0), 0);
  const window = Math.min(100, Math.floor(perIteration.length / 4));
  return {
    iterations: result.iterations,
    overheadMs: (wallMs - totalGenerateMs - totalToolMs) / result.iterations,
    wallPerIterationMs: wallMs / result.iterations,
    generatePerIterationMs: totalGenerateMs / result.iterations,
    window,
    firstWindowMs: mean(perIteration.slice(0, window)),
    lastWindowMs: mean(perIteration.slice(-window)),
    firstWindowWallMs: mean(generateStartedAt.slice(1, window + 1).map((at, index) => at - generateStartedAt[index])),
    lastWindowWallMs: mean(
      generateStartedAt.slice(-window).map((at, index) => (generateStartedAt[generateStartedAt.length - window + index + 1] ?? ended) - at),
    ),
  };
};

/** .what = the gc function, exposed at run time as the repl's contract.3 test does */
const getGc = (): (() => void) => {
  setFlagsFromString('--expose_gc');
  return runInNewContext('gc') as () => void;
};

/**
 * .what = heap growth over repl calls whose refs the caller ignores (contract.3), in MB
 * .why = the repl keeps only its latest refs: memory must not grow with the number of calls
 */
const measureHeapGrowth = async (input: { calls: number; warmup: number; standin: Standin }): Promise<number> => {
  const { standin } = input;
  const gc = getGc();
  standin.reset();
  standin.respond = () => ({ text: 'ok '.repeat(200) });
  const repl = genBrainRepl({ slug: 'bhrain.struct.v1@qwen/qwen-plus' });
  const context = standinContext(standin, nodeHttpFetch);
  const call = () => repl.ask({ say: `question ${'q'.repeat(2_000)}` }, context);
  for (let index = 0; index < input.warmup; index++) await call();
  standin.requests.length = 0;
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let index = 0; index < input.calls; index++) {
    await call();
    // the stand-in's own record is not the repl's memory
    if (index % 10 === 0) standin.requests.length = 0;
  }
  standin.requests.length = 0;
  standin.respond = null;
  gc();
  return (process.memoryUsage().heapUsed - before) / 1024 / 1024;
};

/**
 * .what = loop section: in-process overhead per iteration over many tool iterations, and heap growth over repl calls
 * .why = the targets: loop overhead under 1 ms per iteration; heap flat (under 5 MB) over 1,000 calls
 */
export const benchLoop = async (options: BenchOptions): Promise<BenchSection> => {
  const size = options.smoke ? 'smoke' : 'full';
  const toolResults = LOOP_TOOL_RESULTS[size];
  const notes: string[] = [];
  const standin = await startStandin({ cacheMinTokens: 1024 });
  try {
    const loops: Record<string, Awaited<ReturnType<typeof measureLoop>>> = {};
    for (const subject of SUBJECTS) {
      options.log(`loop: ${subject.slug}, ${toolResults} tool iterations`);
      loops[subject.name] = await measureLoop({ slug: subject.slug, toolResults, standin, fetch: nodeHttpFetch });
      const loop = loops[subject.name];
      options.log(
        `loop: ${subject.slug} overhead ${round(loop.overheadMs)} ms/iteration, wall ${round(loop.wallPerIterationMs)} ms/iteration`,
      );
    }
    // the same loops as a library caller runs them without passing a fetch: the SDKs send with node's global fetch
    const platformWalls: Record<string, number> = {};
    for (const subject of SUBJECTS) {
      options.log(`loop: ${subject.slug}, ${toolResults} tool iterations, the SDK's own fetch`);
      platformWalls[subject.name] = (await measureLoop({ slug: subject.slug, toolResults, standin })).wallPerIterationMs;
      options.log(`loop: ${subject.slug} with the SDK's own fetch, wall ${round(platformWalls[subject.name])} ms/iteration`);
    }

    const calls = HEAP_CALLS[size];
    options.log(`loop: heap growth over ${calls} repl calls`);
    const heapMb = await measureHeapGrowth({ calls, warmup: HEAP_WARMUP_CALLS[size], standin });
    options.log(`loop: heap growth ${round(heapMb, 2)} MB`);

    const overheadValues = Object.fromEntries(SUBJECTS.map((subject) => [subject.name, round(loops[subject.name].overheadMs)]));
    const worstOverheadMs = Math.max(...Object.values(overheadValues));
    const rows: BenchRow[] = [
      {
        metric: 'loop overhead per iteration',
        unit: 'ms',
        values: overheadValues,
        target: { text: `< ${LOOP_TARGET_MS} ms`, met: worstOverheadMs < LOOP_TARGET_MS },
      },
      {
        metric: 'wall time per iteration (incl. HTTP, SDK, stand-in)',
        unit: 'ms',
        values: Object.fromEntries(SUBJECTS.map((subject) => [subject.name, round(loops[subject.name].wallPerIterationMs)])),
        ratios: { 'qwen/claude': ratio(loops.qwen.wallPerIterationMs, loops.claude.wallPerIterationMs) },
      },
      {
        metric: "wall time per iteration, the SDK's own fetch (node's global fetch)",
        unit: 'ms',
        values: Object.fromEntries(SUBJECTS.map((subject) => [subject.name, round(platformWalls[subject.name])])),
      },
      {
        metric: `heap growth over ${calls.toLocaleString('en-US')} repl calls`,
        unit: 'MB',
        values: { bhrain: round(heapMb, 2) },
        target: { text: `< ${HEAP_TARGET_MB} MB`, met: heapMb < HEAP_TARGET_MB },
      },
    ];

    notes.push(
      `Loop: genBhrain on each atom against the in-process stand-in (zero latency), one no-op tool, a memory manager that never compacts, so the history grows to ${toolResults.toLocaleString('en-US')} tool calls and results; ${loops.claude.iterations} iterations (the last answers with text). ` +
        "The atoms send with the fetch the CLI gives them (nodeHttpFetch, over node:http); the third row runs the same loops with the SDK's own fetch (node's global fetch, undici), which a library caller gets unless it passes context.fetch; they run after the others, in a process whose code is already compiled, so the two wall rows are not a ratio. " +
        "Overhead = (wall time of invoke − time inside atom.generate − time inside the tool) / iterations: the loop's own work (history, permission, events, memory consultation, result formatting). " +
        "Wall time per iteration also holds the SDK, HTTP over loopback, and the stand-in's own parsing and cache accounting, which grow with the history.",
    );
    for (const subject of SUBJECTS) {
      const loop = loops[subject.name];
      const growth = loop.lastWindowMs - loop.firstWindowMs;
      const grows = loop.lastWindowMs > 2 * loop.firstWindowMs && growth > 0.05;
      notes.push(
        `${subject.slug}: overhead per iteration ${round(loop.firstWindowMs)} ms over the first ${loop.window} iterations vs ${round(loop.lastWindowMs)} ms over the last ${loop.window}` +
          (grows
            ? ' — it grows with the history length (per-iteration work over the whole history, so quadratic in total)'
            : ' — flat in the history length') +
          `; wall per iteration ${round(loop.firstWindowWallMs)} ms → ${round(loop.lastWindowWallMs)} ms (generate ${round(loop.generatePerIterationMs)} ms on average).`,
      );
    }
    notes.push(
      `Heap: genBrainRepl('bhrain.struct.v1@qwen/qwen-plus') with the CLI's fetch, ${HEAP_WARMUP_CALLS[size]} warm-up asks, gc, ${calls.toLocaleString('en-US')} asks whose refs are ignored (2 KB prompt, 600-char answer), the stand-in's request log cleared, gc; growth of heapUsed (contract.3).`,
    );
    if (options.smoke) notes.push('Smoke run: too few iterations and calls for the numbers to say anything about the targets.');
    return { title: 'Loop: in-process overhead and heap growth', rows, notes };
  } finally {
    await standin.close();
  }
};

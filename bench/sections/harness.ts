import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startStandin, type Standin, type StandinRequest } from '../../test/standin/standin.js';
import { median, ratio, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';
import { genPeers, type Peer } from '../peers.js';
import { runMeasured, type MeasuredRun } from '../runMeasured.js';

/** the steps of the harness task; its rows compare every peer on it */
export const TASK_ITERATIONS = 20;

/** runs per peer in a full run; peers alternate within each round, so drift in the machine's load hits all alike */
const FULL_RUNS = 7;

/** .what = the task prompt: one `echo step N` shell call per step, then "done" */
export const genTaskPrompt = (iterations: number): string =>
  `Run the shell command \`echo step N\` for N = 1 to ${iterations}, one tool call at a time, then reply "done".`;

/** .what = how many tool results a request carries, in either protocol */
const toolResultsIn = (request: StandinRequest): number =>
  request.protocol === 'anthropic'
    ? (request.body.messages ?? [])
        .flatMap((message: { content: unknown }) => (Array.isArray(message.content) ? message.content : []))
        .filter((block: { type?: string }) => block.type === 'tool_result').length
    : (request.body.messages ?? []).filter((message: { role: string }) => message.role === 'tool').length;

/** .what = whether a request offers a tool by name, in either protocol ({name} or {function: {name}}) */
const offersTool = (request: StandinRequest, name: string): boolean =>
  (request.body.tools ?? []).some((tool: { name?: string; function?: { name?: string } }) => (tool.name ?? tool.function?.name) === name);

/** .what = the scripted model: one shell call per turn until the task's count, then done; side requests get a short text */
export const genTaskModel = (peer: Peer, iterations: number) => (request: StandinRequest) => {
  if (!offersTool(request, peer.shellCall('echo').name)) return { text: 'ok' };
  const done = toolResultsIn(request);
  return done < iterations ? { toolCalls: [peer.shellCall(`echo step ${done + 1}`)] } : { text: 'done' };
};

/** .what = the share of prompt tokens read from cache from the second request on, and all prompt tokens sent */
const readCacheUsage = (requests: readonly StandinRequest[]) => {
  const prompt = (request: StandinRequest) =>
    request.usage ? request.usage.input + request.usage.cacheRead + request.usage.cacheWrite : 0;
  const later = requests.slice(1);
  const laterPrompt = later.reduce((sum, request) => sum + prompt(request), 0);
  return {
    cacheShare: laterPrompt ? later.reduce((sum, request) => sum + (request.usage?.cacheRead ?? 0), 0) / laterPrompt : null,
    promptTokens: requests.reduce((sum, request) => sum + prompt(request), 0),
  };
};

/** .what = one completed task run: what the process cost and what the stand-in saw */
export interface TaskRun {
  run: MeasuredRun;
  /** the requests of the task itself (side requests, such as title generation, left out) */
  shellRequests: StandinRequest[];
}

/**
 * .what = runs a peer on the `iterations`-step task against the stand-in, in a fresh home and cwd; throws when it
 *         exits non-zero or the model never saw all the tool results
 * .why = the harness and one-turn sections time the same task the same way
 */
export const runPeerTask = async (
  peer: Peer,
  standin: Standin,
  iterations: number,
  options: { sampleRss: boolean } = { sampleRss: true },
): Promise<TaskRun> => {
  standin.reset();
  standin.respond = genTaskModel(peer, iterations);
  const home = await mkdtemp(join(tmpdir(), 'bhrain-bench-home-'));
  const cwd = await mkdtemp(join(tmpdir(), 'bhrain-bench-cwd-'));
  try {
    const run = await runMeasured({
      ...peer.task({ prompt: genTaskPrompt(iterations), standinUrl: standin.url, home }),
      cwd,
      timeoutMs: 180_000,
      sampleRss: options.sampleRss,
    });
    const shellRequests = standin.requests.filter((request) => toolResultsIn(request) > 0 || offersTool(request, peer.shellCall('x').name));
    const answered = shellRequests.some((request) => toolResultsIn(request) >= iterations);
    if (run.code !== 0 || !answered)
      throw new Error(`exit ${run.code}, ${shellRequests.length} model requests: ${(run.stderr || run.stdout).trim().slice(-300)}`);
    return { run, shellRequests };
  } finally {
    await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
  }
};

interface PeerResult {
  helpMs: number | null;
  wallMs: number | null;
  peakRssMb: number | null;
  firstRequestMs: number | null;
  requests: number | null;
  cacheShare: number | null;
  promptTokens: number | null;
  failure: string | null;
}

/** .what = what the rounds gathered for one peer so far */
interface PeerRuns {
  helps: number[];
  walls: number[];
  rss: number[];
  firsts: number[];
  last: { requests: number; cacheShare: number | null; promptTokens: number };
  failure: string | null;
}

/**
 * .what = measures the peers in alternating rounds: every peer's --help, then every peer's task, round by round
 * .why = one peer's runs all at once would take the machine's load of that moment; a round spreads it over all
 */
const measurePeers = async (
  peers: readonly Peer[],
  standin: Standin,
  options: BenchOptions,
): Promise<{ results: Record<string, PeerResult>; nodeFloorMs: number | null }> => {
  const runs = options.smoke ? 1 : FULL_RUNS;
  const iterations = options.smoke ? 2 : TASK_ITERATIONS;
  const gathered = Object.fromEntries(
    peers.map((peer): [string, PeerRuns] => [
      peer.name,
      { helps: [], walls: [], rss: [], firsts: [], last: { requests: 0, cacheShare: null, promptTokens: 0 }, failure: null },
    ]),
  );
  // `node -e 0` in the same rounds: the floor every node CLI starts from, which bhrain's --help target is set above
  const nodeFloors: number[] = [];
  const helpRun = (command: { command: string; args: string[] }) =>
    runMeasured({ ...command, env: { PATH: process.env.PATH, HOME: tmpdir() }, cwd: tmpdir(), timeoutMs: 30_000, sampleRss: false });
  for (let index = 0; index < (options.smoke ? 1 : 10); index++) {
    nodeFloors.push((await helpRun({ command: process.execPath, args: ['-e', '0'] })).wallMs);
    for (const peer of peers) gathered[peer.name].helps.push((await helpRun(peer.help())).wallMs);
  }
  for (let index = 0; index < runs; index++)
    for (const peer of peers) {
      const into = gathered[peer.name];
      if (into.failure) continue;
      try {
        const { run, shellRequests } = await runPeerTask(peer, standin, iterations);
        into.walls.push(run.wallMs);
        into.rss.push(run.peakRssMb);
        if (standin.requests[0]) into.firsts.push(standin.requests[0].at - run.startedAt);
        into.last = { requests: standin.requests.length, ...readCacheUsage(shellRequests) };
        options.log(
          `  ${peer.name}: run ${index + 1}/${runs}: ${Math.round(run.wallMs)} ms, ${Math.round(run.peakRssMb)} MB, ${standin.requests.length} requests`,
        );
      } catch (error) {
        into.failure = error instanceof Error ? error.message : String(error);
      }
    }
  const results = Object.fromEntries(
    Object.entries(gathered).map(([name, into]): [string, PeerResult] => [
      name,
      into.failure
        ? {
            helpMs: median(into.helps),
            wallMs: null,
            peakRssMb: null,
            firstRequestMs: null,
            requests: null,
            cacheShare: null,
            promptTokens: null,
            failure: into.failure,
          }
        : {
            helpMs: median(into.helps),
            wallMs: median(into.walls),
            peakRssMb: median(into.rss),
            firstRequestMs: median(into.firsts),
            requests: into.last.requests,
            cacheShare: into.last.cacheShare,
            promptTokens: into.last.promptTokens,
            failure: null,
          },
    ]),
  );
  return { results, nodeFloorMs: median(nodeFloors) };
};

/** bhrain's --help may cost at most this much more than `node -e 0` */
const TARGET_HELP_ABOVE_NODE_MS = 60;

const round = (value: number | null, digits = 0) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);

/**
 * .what = sections 1, 2 and 4: whole-process wall time and peak RSS for the same scripted 20-step task, cold start
 *         (--help, first model request), and prompt-cache share and prompt tokens; bhrain vs Claude Code vs Qwen Code
 * .why = the harness cost of each, on the same scripted model with zero model latency, in one run
 */
export const benchHarness = async (options: BenchOptions): Promise<BenchSection> => {
  const standin = await startStandin({ cacheMinTokens: 1024 });
  const notes: string[] = [];
  const results: Record<string, PeerResult> = {};
  let nodeFloorMs: number | null;
  try {
    const peers: Peer[] = [];
    for (const peer of genPeers()) {
      if (peer.unavailable) notes.push(`${peer.name}: not measured: ${peer.unavailable}`);
      else peers.push(peer);
    }
    options.log(`harness: ${peers.map((peer) => peer.name).join(', ')}, alternating`);
    const measured = await measurePeers(peers, standin, options);
    Object.assign(results, measured.results);
    nodeFloorMs = measured.nodeFloorMs === null ? null : Math.round(measured.nodeFloorMs);
    for (const peer of peers)
      if (results[peer.name].failure) notes.push(`${peer.name}: the task did not complete: ${results[peer.name].failure}`);
  } finally {
    await standin.close();
  }
  const value = (name: string, key: keyof PeerResult, digits = 0) => round((results[name]?.[key] as number | null) ?? null, digits);
  const B = 'bhrain (claude protocol)';
  const BQ = 'bhrain (qwen protocol)';
  const C = 'claude code';
  const Q = 'qwen code';
  const row = (metric: string, unit: string, key: keyof PeerResult, digits = 0): BenchRow => ({
    metric,
    unit,
    values: Object.fromEntries([B, C, BQ, Q].map((name) => [name, value(name, key, digits)])),
    ratios: {
      'bhrain/claude code': ratio(value(B, key, digits), value(C, key, digits)),
      'bhrain/qwen code': ratio(value(BQ, key, digits), value(Q, key, digits)),
    },
  });
  const wall = row(`wall time, ${options.smoke ? 2 : TASK_ITERATIONS}-step bash task`, 'ms', 'wallMs');
  const wallVsClaude = wall.ratios!['bhrain/claude code'];
  const wallVsQwen = wall.ratios!['bhrain/qwen code'];
  wall.target = {
    text: '≤ 0.5x Claude Code and ≤ 1x Qwen Code',
    met: wallVsClaude === null || wallVsQwen === null ? null : wallVsClaude <= 0.5 && wallVsQwen <= 1,
  };
  const rss = row('peak RSS of the process tree', 'MB', 'peakRssMb');
  rss.target = {
    text: '≤ 0.5x Claude Code',
    met: rss.ratios!['bhrain/claude code'] === null ? null : rss.ratios!['bhrain/claude code']! <= 0.5,
  };
  const help = row('cold start: --help', 'ms', 'helpMs');
  help.target = {
    text: `bhrain ≤ node -e 0 (${nodeFloorMs ?? '–'} ms) + ${TARGET_HELP_ABOVE_NODE_MS} ms`,
    met: value(B, 'helpMs') === null || nodeFloorMs === null ? null : value(B, 'helpMs')! <= nodeFloorMs + TARGET_HELP_ABOVE_NODE_MS,
  };
  const first = row('cold start: spawn to first model request', 'ms', 'firstRequestMs');
  const cache = row('prompt-cache share of input, request 2 on', 'share', 'cacheShare', 3);
  delete cache.values[BQ];
  delete cache.values[Q];
  cache.ratios = { 'bhrain/claude code': cache.ratios!['bhrain/claude code'] };
  cache.target = { text: 'bhrain ≥ 0.9', met: cache.values[B] === null ? null : cache.values[B]! >= 0.9 };
  const tokens = row('prompt tokens sent for the task (input + cache read + cache write)', 'tokens', 'promptTokens');
  tokens.target = {
    text: 'bhrain ≤ Claude Code',
    met: tokens.ratios!['bhrain/claude code'] === null ? null : tokens.ratios!['bhrain/claude code']! <= 1,
  };
  const requests = row('model requests for the task', 'count', 'requests');
  notes.push(
    `each value is the median of ${options.smoke ? 1 : FULL_RUNS} runs per peer, the peers alternating round by round (bhrain, Claude Code, bhrain, Qwen Code, …); the one-turn section gives min–max of bhrain against Claude Code; the peak RSS sums the peak (VmHWM) of every process living in the tree (shells, relaunched children), sampled every 20 ms, so a peak between two samples counts; a child between its fork and its exec, still in its parent's memory, counts with its parent; --help runs are not sampled, and alternate with \`node -e 0\`, the floor its target is set above; the cache share is read from the stand-in's prompt-cache accounting (1,024-token minimum, as the real API); qwen protocol rows compare bhrain on the openai wire protocol with Qwen Code`,
  );
  return {
    title: 'Harness overhead, cold start and prompt cache (bhrain vs Claude Code vs Qwen Code)',
    rows: [wall, rss, help, first, cache, tokens, requests],
    notes,
  };
};

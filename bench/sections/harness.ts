import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startStandin, type Standin, type StandinRequest } from '../../test/standin/standin.js';
import { median, ratio, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';
import { genPeers, type Peer } from '../peers.js';
import { runMeasured } from '../runMeasured.js';

const TASK_ITERATIONS = 20;
const PROMPT = `Run the shell command \`echo step N\` for N = 1 to ${TASK_ITERATIONS}, one tool call at a time, then reply "done".`;

/** .what = how many tool results a request carries, in either protocol */
const toolResultsIn = (request: StandinRequest): number =>
  request.protocol === 'anthropic'
    ? (request.body.messages ?? []).flatMap((message: { content: unknown }) => (Array.isArray(message.content) ? message.content : [])).filter((block: { type?: string }) => block.type === 'tool_result').length
    : (request.body.messages ?? []).filter((message: { role: string }) => message.role === 'tool').length;

/** .what = the scripted model: one shell call per turn until the task's count, then done; side requests get a short text */
const genTaskModel = (peer: Peer, iterations: number) => (request: StandinRequest) => {
  const call = peer.shellCall('echo');
  const offered = JSON.stringify(request.body.tools ?? []).includes(`"${call.name}"`);
  if (!offered) return { text: 'ok' };
  const done = toolResultsIn(request);
  return done < iterations ? { toolCalls: [peer.shellCall(`echo step ${done + 1}`)] } : { text: 'done' };
};

/** .what = the share of prompt tokens read from cache from the second request on, and all prompt tokens sent */
const readCacheUsage = (requests: readonly StandinRequest[]) => {
  const prompt = (request: StandinRequest) => (request.usage ? request.usage.input + request.usage.cacheRead + request.usage.cacheWrite : 0);
  const later = requests.slice(1);
  const laterPrompt = later.reduce((sum, request) => sum + prompt(request), 0);
  return {
    cacheShare: laterPrompt ? later.reduce((sum, request) => sum + (request.usage?.cacheRead ?? 0), 0) / laterPrompt : null,
    promptTokens: requests.reduce((sum, request) => sum + prompt(request), 0),
  };
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

const measurePeer = async (peer: Peer, standin: Standin, options: BenchOptions): Promise<PeerResult> => {
  const runs = options.smoke ? 1 : 5;
  const iterations = options.smoke ? 2 : TASK_ITERATIONS;
  const helps: number[] = [];
  for (let index = 0; index < (options.smoke ? 1 : 10); index++) {
    const help = await runMeasured({ ...peer.help(), env: { PATH: process.env.PATH, HOME: tmpdir() }, cwd: tmpdir(), timeoutMs: 30_000 });
    helps.push(help.wallMs);
  }
  const walls: number[] = [];
  const rss: number[] = [];
  const firsts: number[] = [];
  let last = { requests: 0, cacheShare: null as number | null, promptTokens: 0 };
  for (let index = 0; index < runs; index++) {
    standin.reset();
    standin.respond = genTaskModel(peer, iterations);
    const home = await mkdtemp(join(tmpdir(), 'bhrain-bench-home-'));
    const cwd = await mkdtemp(join(tmpdir(), 'bhrain-bench-cwd-'));
    const run = await runMeasured({ ...peer.task({ prompt: PROMPT, standinUrl: standin.url, home }), cwd, timeoutMs: 180_000 });
    const shellRequests = standin.requests.filter((request) => toolResultsIn(request) > 0 || JSON.stringify(request.body.tools ?? []).includes(peer.shellCall('x').name));
    const answered = shellRequests.some((request) => toolResultsIn(request) >= iterations);
    await Promise.all([rm(home, { recursive: true, force: true }), rm(cwd, { recursive: true, force: true })]);
    if (run.code !== 0 || !answered)
      return {
        helpMs: median(helps),
        wallMs: null,
        peakRssMb: null,
        firstRequestMs: null,
        requests: null,
        cacheShare: null,
        promptTokens: null,
        failure: `exit ${run.code}, ${shellRequests.length} model requests: ${(run.stderr || run.stdout).trim().slice(-300)}`,
      };
    walls.push(run.wallMs);
    rss.push(run.peakRssMb);
    if (standin.requests[0]) firsts.push(standin.requests[0].at - run.startedAt);
    last = { requests: standin.requests.length, ...readCacheUsage(shellRequests) };
    options.log(`  ${peer.name}: run ${index + 1}/${runs}: ${Math.round(run.wallMs)} ms, ${Math.round(run.peakRssMb)} MB, ${standin.requests.length} requests`);
  }
  return {
    helpMs: median(helps),
    wallMs: median(walls),
    peakRssMb: median(rss),
    firstRequestMs: median(firsts),
    requests: last.requests,
    cacheShare: last.cacheShare,
    promptTokens: last.promptTokens,
    failure: null,
  };
};

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
  try {
    for (const peer of genPeers()) {
      if (peer.unavailable) {
        notes.push(`${peer.name}: not measured: ${peer.unavailable}`);
        continue;
      }
      options.log(`harness: ${peer.name}`);
      results[peer.name] = await measurePeer(peer, standin, options);
      if (results[peer.name].failure) notes.push(`${peer.name}: the task did not complete: ${results[peer.name].failure}`);
    }
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
    ratios: { 'bhrain/claude code': ratio(value(B, key, digits), value(C, key, digits)), 'bhrain/qwen code': ratio(value(BQ, key, digits), value(Q, key, digits)) },
  });
  const wall = row(`wall time, ${options.smoke ? 2 : TASK_ITERATIONS}-step bash task`, 'ms', 'wallMs');
  const wallVsClaude = wall.ratios!['bhrain/claude code'];
  const wallVsQwen = wall.ratios!['bhrain/qwen code'];
  wall.target = {
    text: '≤ 0.5x Claude Code and ≤ 1x Qwen Code',
    met: wallVsClaude === null || wallVsQwen === null ? null : wallVsClaude <= 0.5 && wallVsQwen <= 1,
  };
  const rss = row('peak RSS of the process tree', 'MB', 'peakRssMb');
  rss.target = { text: '≤ 0.5x Claude Code', met: rss.ratios!['bhrain/claude code'] === null ? null : rss.ratios!['bhrain/claude code']! <= 0.5 };
  const help = row('cold start: --help', 'ms', 'helpMs');
  help.target = { text: 'bhrain < 150 ms', met: value(B, 'helpMs') === null ? null : value(B, 'helpMs')! < 150 };
  const first = row('cold start: spawn to first model request', 'ms', 'firstRequestMs');
  const cache = row('prompt-cache share of input, request 2 on', 'share', 'cacheShare', 3);
  delete cache.values[BQ];
  delete cache.values[Q];
  cache.ratios = { 'bhrain/claude code': cache.ratios!['bhrain/claude code'] };
  cache.target = { text: 'bhrain ≥ 0.9', met: cache.values[B] === null ? null : cache.values[B]! >= 0.9 };
  const tokens = row('prompt tokens sent for the task (input + cache read + cache write)', 'tokens', 'promptTokens');
  tokens.target = { text: 'bhrain ≤ Claude Code', met: tokens.ratios!['bhrain/claude code'] === null ? null : tokens.ratios!['bhrain/claude code']! <= 1 };
  const requests = row('model requests for the task', 'count', 'requests');
  notes.push(
    'each value is the median of the runs; the peak RSS sums every process of the tree (shells, relaunched children), sampled every 20 ms; the cache share is read from the stand-in\'s prompt-cache accounting (1,024-token minimum, as the real API); qwen protocol rows compare bhrain on the openai wire protocol with Qwen Code',
  );
  return { title: 'Harness overhead, cold start and prompt cache (bhrain vs Claude Code vs Qwen Code)', rows: [wall, rss, help, first, cache, tokens, requests], notes };
};

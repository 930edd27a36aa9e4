// OpenTelemetry traces and metrics of `bhrain act`, through the built CLI as a child process; the real
// OTLP/HTTP (JSON) exporters send to a receiver this test starts on 127.0.0.1, which decodes what they send
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, PACKAGE_ROOT, runBhrain, runProcess } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';
import { genGitRepo } from '#test-helpers/git.js';

const { standin } = useStandin();

/** a secret of the run's environment, which the task quotes: never exported as it is */
const SECRET = 'sk-telemetry-test-9f8e7d6c5b4a3928';
/** the collector's API key, in OTEL_EXPORTER_OTLP_HEADERS: sent as a header, never as text the model or a span holds */
const COLLECTOR_KEY = 'collector-key-77c1e0b2a9d84f63';
/** a word only the task holds: exported only with BHRAIN_TELEMETRY_LOG_PROMPTS=1 */
const PROMPT_WORD = 'ostrich';
/** a word only the answer holds */
const ANSWER_WORD = 'pelican';

/** .what = an OTLP/JSON attribute list as a plain object */
const attributesOf = (list: Array<{ key: string; value: Record<string, unknown> }> = []): Record<string, unknown> => {
  const valueOf = (value: Record<string, unknown>): unknown => {
    if ('stringValue' in value) return value.stringValue;
    if ('boolValue' in value) return value.boolValue;
    if ('intValue' in value) return Number(value.intValue);
    if ('doubleValue' in value) return Number(value.doubleValue);
    if ('arrayValue' in value) return ((value.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(valueOf);
    return value;
  };
  return Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));
};

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code?: number };
  startMs: number;
  endMs: number;
}

/**
 * .what = an OTLP/HTTP receiver on 127.0.0.1: every POST's raw body kept, JSON payloads decoded; 'ok' answers 200,
 *         'hang' accepts the request and never answers
 */
const startReceiver = async (mode: 'ok' | 'hang') => {
  const bodies: Array<{ path: string; contentType: string; text: string; headers: IncomingMessage['headers'] }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push({
        path: request.url ?? '',
        contentType: String(request.headers['content-type']),
        text: Buffer.concat(chunks).toString('utf8'),
        headers: request.headers,
      });
      if (mode === 'ok') response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const payloads = (path: string) => bodies.filter((body) => body.path === path).map((body) => JSON.parse(body.text));
  return {
    url,
    bodies,
    spans: (): ReceivedSpan[] =>
      payloads('/v1/traces').flatMap((payload) =>
        payload.resourceSpans.flatMap((resource: { scopeSpans: Array<{ spans: Array<Record<string, any>> }> }) =>
          resource.scopeSpans.flatMap((scope) =>
            scope.spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              attributes: attributesOf(span.attributes),
              events: (span.events ?? []).map((event: Record<string, any>) => ({
                name: event.name,
                attributes: attributesOf(event.attributes),
              })),
              status: span.status ?? {},
              startMs: Number(BigInt(span.startTimeUnixNano) / 1_000_000n),
              endMs: Number(BigInt(span.endTimeUnixNano) / 1_000_000n),
            })),
          ),
        ),
      ),
    resources: () =>
      payloads('/v1/traces').flatMap((payload) => payload.resourceSpans.map((resource: any) => attributesOf(resource.resource.attributes))),
    metrics: (): Array<{ name: string; unit: string; points: Array<{ attributes: Record<string, unknown>; value: number }> }> =>
      payloads('/v1/metrics').flatMap((payload) =>
        payload.resourceMetrics.flatMap((resource: any) =>
          resource.scopeMetrics.flatMap((scope: any) =>
            scope.metrics.map((metric: any) => {
              const data = metric.sum ?? metric.histogram ?? metric.gauge;
              return {
                name: metric.name,
                unit: metric.unit,
                points: (data?.dataPoints ?? []).map((point: any) => ({
                  attributes: attributesOf(point.attributes),
                  value: Number(point.asDouble ?? point.asInt ?? point.sum ?? 0),
                })),
              };
            }),
          ),
        ),
      ),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

/** .what = a temp repo with a file to read, and a home of its own */
const genRepo = async () => {
  const base = tempDir('bhrain-telemetry-');
  const repo = genGitRepo({ dir: join(base, 'repo'), files: { 'greet.ts': 'export const greet = () => "hi";\n' } });
  return { base, repo, home: join(base, 'home') };
};

/** whether a request is the explore child's: its first user message is the task's prompt */
const isChild = (request: StandinRequest): boolean => JSON.stringify(request.body.messages[0]).includes('find where greet is defined');

/**
 * .what = the stand-in's script: the parent's first request fails with 529 once (retried), then it reads greet.ts and
 *         delegates to an explore child (which greps, then answers), then answers
 */
const scriptRun = () => {
  let failed = false;
  standin().respond = (request) => {
    if (isChild(request)) {
      const done = JSON.stringify(request.body.messages).includes('tool_result');
      return done ? { text: 'greet is defined in greet.ts, line 1' } : { toolCalls: [{ name: 'grep', input: { pattern: 'greet' } }] };
    }
    if (!failed) {
      failed = true;
      return { error: { status: 529, retryAfterMs: 10, message: 'overloaded' } };
    }
    const history = JSON.stringify(request.body.messages);
    if (history.includes('greet is defined in greet.ts')) return { text: `The ${ANSWER_WORD} found greet in greet.ts.` };
    return {
      toolCalls: [
        { name: 'read', input: { path: 'greet.ts' } },
        { name: 'task', input: { description: 'find greet', prompt: 'find where greet is defined', subagent_type: 'explore' } },
      ],
    };
  };
};

const TASK = `the secret word is ${PROMPT_WORD}, the key is ${SECRET}. Where is greet defined?`;

/** .what = the span tree of the scripted run: the session, its model calls (the first one retried), its tool calls, the subagent under its task call */
const assertSpanTree = (spans: ReceivedSpan[]) => {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const childrenOf = (parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);
  // one trace, one root: the run's session
  expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
  const roots = spans.filter((span) => !span.parentSpanId || !byId.has(span.parentSpanId));
  expect(roots.map((span) => span.name)).toEqual(['invoke_agent bhrain']);
  const [root] = roots;
  expect(root.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'bhrain.skill': 'act',
    'bhrain.atom': 'claude/haiku',
    'bhrain.termination': 'complete',
    'bhrain.exit_code': 0,
    'bhrain.iterations': 2,
  });

  // the model calls: GenAI attributes, cost, and the retry of the first one
  const chats = childrenOf(root).filter((span) => span.name.startsWith('chat '));
  expect(chats).toHaveLength(2);
  for (const chat of chats) {
    expect(chat.attributes).toMatchObject({
      'gen_ai.system': 'anthropic',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': expect.stringMatching(/^claude-haiku/),
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
      'gen_ai.usage.cache_read.input_tokens': expect.any(Number),
      'gen_ai.usage.cache_creation.input_tokens': expect.any(Number),
      'bhrain.cost.usd': expect.any(Number),
    });
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(chat.endMs).toBeGreaterThanOrEqual(chat.startMs);
  }
  const [first, second] = [...chats].sort((a, b) => a.startMs - b.startMs);
  expect(first.attributes['bhrain.model.attempts']).toBe(2);
  expect(first.events).toEqual([
    {
      name: 'bhrain.model.retry',
      attributes: expect.objectContaining({ 'bhrain.retry.attempt': 2, 'bhrain.retry.reason': expect.stringContaining('529') }),
    },
  ]);
  expect(second.attributes['bhrain.model.attempts']).toBe(1);

  // the tool calls: name, outcome, duration; the task call holds the subagent's session
  const tools = childrenOf(root).filter((span) => span.name.startsWith('execute_tool '));
  expect(tools.map((span) => span.attributes['gen_ai.tool.name']).sort()).toEqual(['read', 'task']);
  for (const tool of tools)
    expect(tool.attributes).toMatchObject({
      'bhrain.tool.outcome': 'success',
      'bhrain.tool.denied': false,
      'bhrain.tool.duration_ms': expect.any(Number),
    });
  const task = tools.find((span) => span.attributes['gen_ai.tool.name'] === 'task')!;
  expect(task.attributes).toMatchObject({ 'bhrain.subagent.type': 'explore', 'bhrain.subagent.status': 'COMPLETED' });
  const [child] = childrenOf(task);
  expect(child.name).toBe('invoke_agent explore');
  expect(child.attributes).toMatchObject({ 'bhrain.session.subagent': true, 'bhrain.termination': 'complete' });
  expect(
    childrenOf(child)
      .map((span) => span.name)
      .sort(),
  ).toEqual(['chat claude-haiku-4-5', 'chat claude-haiku-4-5', 'execute_tool grep'].sort());
  expect(spans).toHaveLength(1 + 2 + 2 + 1 + 3);
};

type ReceivedMetric = ReturnType<Awaited<ReturnType<typeof startReceiver>>['metrics']>[number];

/** .what = the metrics of the scripted run: the GenAI client metrics and bhrain's, with the atom, the model and the skill */
const assertMetrics = (metrics: ReceivedMetric[]) => {
  // metrics: the GenAI client metrics and bhrain's, with the atom, the model and the skill
  const names = new Set(metrics.map((metric) => metric.name));
  for (const name of [
    'gen_ai.client.token.usage',
    'gen_ai.client.operation.duration',
    'bhrain.tokens',
    'bhrain.cost',
    'bhrain.model.calls',
    'bhrain.model.retries',
    'bhrain.tool.calls',
    'bhrain.tool.duration',
    'bhrain.sessions',
  ])
    expect(names, name).toContain(name);
  const point = (name: string) => metrics.find((metric) => metric.name === name)!.points;
  expect(point('gen_ai.client.token.usage')[0].attributes).toMatchObject({
    'bhrain.atom': 'claude/haiku',
    'bhrain.skill': 'act',
    'gen_ai.request.model': expect.stringMatching(/^claude-haiku/),
    'gen_ai.token.type': expect.stringMatching(/^(input|output)$/),
  });
  const toolCalls = point('bhrain.tool.calls');
  expect(toolCalls.reduce((sum, each) => sum + each.value, 0)).toBe(3);
  expect(toolCalls.map((each) => each.attributes['gen_ai.tool.name']).sort()).toEqual(['grep', 'read', 'task']);
  expect(point('bhrain.model.calls').reduce((sum, each) => sum + each.value, 0)).toBe(4);
  expect(point('bhrain.model.retries').reduce((sum, each) => sum + each.value, 0)).toBe(1);
  expect(point('bhrain.cost').reduce((sum, each) => sum + each.value, 0)).toBeGreaterThan(0);
};

const telemetryEnv = (receiver: { url: string }, home: string, more: Record<string, string> = {}) =>
  genCliEnv(
    { standin: standin(), home },
    { BHRAIN_TELEMETRY: '1', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, MY_SERVICE_TOKEN: SECRET, ...more },
  );

describe('telemetry: traces and metrics over OTLP/HTTP', () => {
  it('telemetry: a run with tools, a subagent and a retry sends its span tree with the GenAI attributes, and its metrics; no prompt, answer or secret by default', async () => {
    const { repo, home } = await genRepo();
    const receiver = await startReceiver('ok');
    try {
      scriptRun();
      const run = await runBhrain({
        args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '--input', TASK],
        cwd: repo,
        env: telemetryEnv(receiver, home),
      });
      expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({
        code: 0,
        stdout: `The ${ANSWER_WORD} found greet in greet.ts.\n`,
      });
      expect(run.stderr).not.toContain('telemetry:');

      // the exporters' own protocol: OTLP/HTTP with JSON bodies, to the standard paths under OTEL_EXPORTER_OTLP_ENDPOINT
      expect(new Set(receiver.bodies.map((body) => `${body.path} ${body.contentType}`))).toEqual(
        new Set(['/v1/traces application/json', '/v1/metrics application/json']),
      );
      expect(receiver.resources()[0]).toMatchObject({ 'service.name': 'bhrain', 'service.version': expect.any(String) });

      assertSpanTree(receiver.spans());
      assertMetrics(receiver.metrics());

      // never exported by default: the task, the answer, the file read, the secret
      const everything = receiver.bodies.map((body) => body.text).join('\n');
      for (const text of [PROMPT_WORD, ANSWER_WORD, SECRET, 'export const greet', 'find where greet is defined'])
        expect(everything, text).not.toContain(text);
    } finally {
      await receiver.close();
    }
  });

  it('telemetry: with BHRAIN_TELEMETRY_LOG_PROMPTS=1 the task, the answer and tool inputs and outputs are exported, a secret in them redacted; a hook run and a denial are spans too', async () => {
    const { repo, home } = await genRepo();
    const receiver = await startReceiver('ok');
    try {
      const env = telemetryEnv(receiver, home, {
        BHRAIN_TELEMETRY_LOG_PROMPTS: '1',
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${COLLECTOR_KEY}`,
      });
      await mkdir(env.BHRAIN_CONFIG_DIR, { recursive: true });
      await writeFile(
        join(env.BHRAIN_CONFIG_DIR, 'settings.json'),
        JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }] } }),
      );
      standin().script(
        {
          toolCalls: [
            { name: 'read', input: { path: 'greet.ts' } },
            { name: 'write', input: { path: 'x.txt', content: `${SECRET} and ${COLLECTOR_KEY}` } },
          ],
        },
        { text: `done, ${ANSWER_WORD}` },
      );
      const run = await runBhrain({
        args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '--permission', 'readOnly', '--input', TASK],
        cwd: repo,
        env,
      });
      expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 0, stdout: `done, ${ANSWER_WORD}\n` });
      const spans = receiver.spans();
      const root = spans.find((span) => span.name === 'invoke_agent bhrain')!;
      expect(root.attributes['bhrain.prompt']).toContain(PROMPT_WORD);
      expect(root.attributes['bhrain.output']).toBe(`done, ${ANSWER_WORD}`);
      const read = spans.find((span) => span.attributes['gen_ai.tool.name'] === 'read' && span.name.startsWith('execute_tool'))!;
      expect(JSON.parse(read.attributes['bhrain.tool.input'] as string)).toEqual({ path: 'greet.ts' });
      expect(read.attributes['bhrain.tool.output']).toContain('export const greet');
      const write = spans.find((span) => span.attributes['gen_ai.tool.name'] === 'write' && span.name.startsWith('execute_tool'))!;
      expect(write.attributes).toMatchObject({
        'bhrain.tool.outcome': 'denied',
        'bhrain.tool.denied': true,
        'bhrain.tool.denied_by': 'guard',
      });
      expect(write.attributes['bhrain.tool.denial_reason']).toEqual(expect.any(String));
      // the PreToolUse hook of each call is a span under its tool call
      const hooks = spans.filter((span) => span.name === 'hook PreToolUse');
      expect(hooks.length).toBeGreaterThanOrEqual(1);
      for (const hook of hooks) expect([read.spanId, write.spanId]).toContain(hook.parentSpanId);
      expect(hooks[0].attributes).toMatchObject({
        'bhrain.hook.event': 'PreToolUse',
        'bhrain.hook.name': 'true',
        'bhrain.hook.exit_code': 0,
      });
      // the secret, in the task and in the write's input, is redacted wherever it would have gone
      const everything = receiver.bodies.map((body) => body.text).join('\n');
      expect(everything).toContain(PROMPT_WORD);
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toContain(SECRET.slice(0, 16));
      // the collector's key went where it belongs, as the exporters' header, and nowhere in a span
      expect(receiver.bodies.every((body) => body.headers.authorization === `Bearer ${COLLECTOR_KEY}`)).toBe(true);
      expect(everything).not.toContain(COLLECTOR_KEY);
      expect(JSON.parse(write.attributes['bhrain.tool.input'] as string).content).toMatch(
        /^\[redacted:\w+\] and \[redacted:OTEL_EXPORTER_OTLP_HEADERS\]$/,
      );
    } finally {
      await receiver.close();
    }
  });
});

describe('telemetry: a collector that is down or hangs never costs the run', () => {
  /** .what = a one-turn run, or with stopAtLimit a run that calls a tool and stops at --max-iterations 1 (exit 3), timed */
  const timed = async (env: Record<string, string | undefined>, repo: string, stopAtLimit = false) => {
    standin().script(stopAtLimit ? { text: 'ok', toolCalls: [{ name: 'read', input: { path: 'greet.ts' } }] } : { text: 'ok' });
    const started = performance.now();
    const limit = stopAtLimit ? ['--max-iterations', '1'] : [];
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', ...limit, '--input', 'hi'], cwd: repo, env });
    return { ...run, ms: performance.now() - started };
  };

  it('telemetry: a collector that accepts the connection and never answers delays the exit by at most 2 s; the answer and the exit code are unchanged, and stderr says the export did not land', async () => {
    const { repo, home } = await genRepo();
    const receiver = await startReceiver('hang');
    try {
      const off = await timed(genCliEnv({ standin: standin(), home }), repo);
      const hung = await timed(telemetryEnv(receiver, home), repo);
      expect({ code: off.code, stdout: off.stdout }).toEqual({ code: 0, stdout: 'ok\n' });
      expect({ code: hung.code, stdout: hung.stdout }).toEqual({ code: 0, stdout: 'ok\n' });
      // the bound is 2 s; the rest of the margin is the OTel code loading and a busy machine's noise
      expect(hung.ms - off.ms).toBeLessThan(2_000 + 600);
      // whichever ends first, the 2 s wait or the export request's own 2 s timeout, the run says the export did not land
      expect(hung.stderr).toMatch(new RegExp(`telemetry: the export to ${receiver.url} (did not finish within 2 s|failed)`));
      // it did reach the collector: the wait was real
      expect(receiver.bodies.length).toBeGreaterThan(0);
      // a run that fails keeps its own exit code too
      const limitedOff = await timed(genCliEnv({ standin: standin(), home }), repo, true);
      const limitedHung = await timed(telemetryEnv(receiver, home), repo, true);
      expect({ off: limitedOff.code, hung: limitedHung.code }).toEqual({ off: 3, hung: 3 });
      expect(limitedHung.stdout).toBe(limitedOff.stdout);
      expect(limitedHung.ms - limitedOff.ms).toBeLessThan(2_000 + 600);
    } finally {
      await receiver.close();
    }
  });

  it('telemetry: a collector that is not listening costs no wait and no exit code: the answer is printed, exit 0, one warning names the endpoint', async () => {
    const { repo, home } = await genRepo();
    // a port that was listening a moment ago and is closed now: connection refused
    const gone = await startReceiver('ok');
    await gone.close();
    const off = await timed(genCliEnv({ standin: standin(), home }), repo);
    const down = await timed(telemetryEnv(gone, home), repo);
    expect({ code: down.code, stdout: down.stdout }).toEqual({ code: 0, stdout: 'ok\n' });
    expect(down.ms - off.ms).toBeLessThan(2_000 + 600);
    expect(down.stderr).toContain(`telemetry: the export to ${gone.url}`);
    expect(down.stderr.match(/telemetry:/g)).toHaveLength(1);
  });

  it('telemetry: a bad BHRAIN_TELEMETRY, BHRAIN_TELEMETRY_LOG_PROMPTS, OTLP endpoint or OTel exporter name is exit 2 naming the variable, before any request (the exporters would fall back to localhost:4318 without a word)', async () => {
    const { repo, home } = await genRepo();
    for (const [name, value] of [
      ['BHRAIN_TELEMETRY', 'yes'],
      ['BHRAIN_TELEMETRY_LOG_PROMPTS', 'on'],
      ['OTEL_EXPORTER_OTLP_ENDPOINT', 'not a url'],
      ['OTEL_EXPORTER_OTLP_ENDPOINT', 'localhost:4318'],
      ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'ftp://collector/v1/traces'],
      ['OTEL_TRACES_EXPORTER', 'zipkin'],
      ['OTEL_METRICS_EXPORTER', 'prometheus'],
    ]) {
      const run = await runBhrain({
        args: ['act', '--atom', 'claude/haiku', '--input', 'hi'],
        cwd: repo,
        env: genCliEnv({ standin: standin(), home }, { BHRAIN_TELEMETRY: '1', [name]: value }),
      });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${name}=${value}`);
    }
    expect(standin().requests).toHaveLength(0);
  });

  it('telemetry: the standard off switches are honoured: OTEL_METRICS_EXPORTER=none sends traces only, OTEL_TRACES_EXPORTER=none metrics only, OTEL_SDK_DISABLED=true nothing', async () => {
    const { repo, home } = await genRepo();
    const receiver = await startReceiver('ok');
    try {
      const sent = async (more: Record<string, string>) => {
        receiver.bodies.length = 0;
        standin().script({ text: 'ok' });
        const run = await runBhrain({
          args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '--input', 'hi'],
          cwd: repo,
          env: telemetryEnv(receiver, home, more),
        });
        expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 0, stdout: 'ok\n' });
        return [...new Set(receiver.bodies.map((body) => body.path))].sort();
      };
      expect(await sent({})).toEqual(['/v1/metrics', '/v1/traces']);
      expect(await sent({ OTEL_METRICS_EXPORTER: 'none' })).toEqual(['/v1/traces']);
      expect(await sent({ OTEL_TRACES_EXPORTER: 'none' })).toEqual(['/v1/metrics']);
      expect(await sent({ OTEL_SDK_DISABLED: 'true' })).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe('telemetry: off by default, and then no OTel code is loaded', () => {
  const RECORDER = join(import.meta.dirname, 'fixtures', 'recordModuleLoads.mjs');
  /** .what = the loaded files that hold the OTLP exporter's code, found by its base class's name */
  const loadsOtel = async (env: Record<string, string | undefined>, repo: string, home: string) => {
    const loads = join(home, `loads-${Math.random()}.txt`);
    standin().script({ text: 'ok' });
    const run = await runProcess({
      command: process.execPath,
      args: [
        '--import',
        RECORDER,
        join(PACKAGE_ROOT, 'bin', 'bhrain'),
        'act',
        '--atom',
        'claude/haiku',
        '--sandbox',
        'off',
        '--input',
        'hi',
      ],
      cwd: repo,
      env: { ...env, BHRAIN_TEST_LOADS: loads },
    });
    expect(run.code, run.stderr).toBe(0);
    const loaded = [
      ...new Set((await readFile(loads, 'utf8')).split('\n').filter((line) => line.startsWith('file://') || line.startsWith('/'))),
    ];
    const texts = await Promise.all(loaded.map((path) => readFile(path.replace(/^file:\/\//, ''), 'utf8').catch(() => '')));
    return loaded.filter((_, index) => texts[index].includes('OTLPExporterBase'));
  };

  it('telemetry: a run without BHRAIN_TELEMETRY (or with 0) loads no OTel module; with it, the OTel chunk loads', async () => {
    const { repo, home } = await genRepo();
    await mkdir(home, { recursive: true });
    expect(await loadsOtel(genCliEnv({ standin: standin(), home }), repo, home)).toEqual([]);
    expect(await loadsOtel(genCliEnv({ standin: standin(), home }, { BHRAIN_TELEMETRY: '0' }), repo, home)).toEqual([]);
    const receiver = await startReceiver('ok');
    try {
      expect((await loadsOtel(telemetryEnv(receiver, home), repo, home)).length).toBeGreaterThan(0);
    } finally {
      await receiver.close();
    }
  });
});

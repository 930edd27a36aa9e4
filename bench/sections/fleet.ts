import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startStandin, type Standin } from '../../test/standin/standin.js';
import { median, spreadRow, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';
import { genPeers, type Peer } from '../peers.js';
import { runMeasured } from '../runMeasured.js';

/**
 * rounds in a full run: each round is six runs of ~130–250 ms (four one-turn runs, two continues) plus the bench's own
 * checks between them (a bucket listing, a directory read), about 2 s on this 2-core machine; 21 rounds and the warm-up
 * keep the section under a minute
 */
const FULL_ROUNDS = 21;

/** the bucket s3rver makes at its start; each store run gets a prefix of its own in it */
const BUCKET = 'bench';

/** s3rver's one account: it checks every request's signature against this key pair */
const S3RVER_KEY = 'S3RVER';

const B = 'bhrain (claude protocol)';

/** the four configurations of a one-turn run, the first the baseline the others' cost is read against */
const CONFIGS = ['plain', 'store', 'telemetry', 'both'] as const;
type Config = (typeof CONFIGS)[number];

const LABELS: Record<Config, string> = {
  plain: 'plain (local ref store, telemetry off)',
  store: 'S3 store (`BHRAIN_STORE=s3://…`, s3rver)',
  telemetry: 'telemetry on (`BHRAIN_TELEMETRY=1`, OTLP/HTTP receiver)',
  both: 'S3 store and telemetry',
};

const COST = 'cost (difference of medians)';

const roundTenth = (value: number): number => Math.round(value * 10) / 10;

/**
 * .what = an OTLP/HTTP receiver on 127.0.0.1 that answers 200 to every POST on /v1/traces and /v1/metrics (404 to
 *         anything else), counting them
 * .why = a run with telemetry on exports at its end and waits for the answer: a collector that answers at once leaves
 *        bhrain's own cost, and the counts prove each run did export
 */
const startReceiver = async () => {
  const received = { traces: 0, metrics: 0, other: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      const path = request.method === 'POST' ? request.url : undefined;
      if (path === '/v1/traces' || path === '/v1/metrics') {
        received[path === '/v1/traces' ? 'traces' : 'metrics']++;
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        received.other++;
        response.writeHead(404).end();
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/**
 * .what = s3rver on 127.0.0.1 (a random port, a temp dir) with the bucket made, and a way to read the series hashes a
 *         store prefix holds
 * .why = loaded here only: s3rver and the S3 client are the bench's, and a section that is not run loads neither
 */
const startS3 = async () => {
  const [{ default: S3rver }, { ListObjectsV2Command, S3Client }] = await Promise.all([import('s3rver'), import('@aws-sdk/client-s3')]);
  const dir = await mkdtemp(join(tmpdir(), 'bhrain-bench-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: BUCKET }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
  });
  return {
    endpoint,
    /** the series a store prefix holds (a bench run writes fewer than a listing page) */
    seriesIn: async (prefix: string): Promise<string[]> => {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}/refs/series/` }));
      return (page.Contents ?? []).map((object) => /([0-9a-f]+)\.json$/.exec(object.Key!)?.[1] ?? object.Key!);
    },
    close: async () => {
      client.destroy();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

type Servers = { standin: Standin; receiver: Awaited<ReturnType<typeof startReceiver>>; s3: Awaited<ReturnType<typeof startS3>> };

/** .what = a run's place: a fresh home (its local ref store) and working directory, and its own prefix in the bucket */
interface Workspace {
  home: string;
  cwd: string;
  prefix: string;
}

const genWorkspace = async (prefix: string): Promise<Workspace> => ({
  home: await mkdtemp(join(tmpdir(), 'bhrain-bench-fleet-home-')),
  cwd: await mkdtemp(join(tmpdir(), 'bhrain-bench-fleet-cwd-')),
  prefix,
});

const dropWorkspace = (place: Workspace) =>
  Promise.all([rm(place.home, { recursive: true, force: true }), rm(place.cwd, { recursive: true, force: true })]);

/** .what = the series hashes in a home's local ref store */
const localSeries = async (place: Workspace): Promise<string[]> =>
  (await readdir(join(place.home, '.bhrain', 'refs', 'series')).catch(() => []))
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -5));

/**
 * .what = one `act --input hi` (the stand-in answers "ok") in a configuration, optionally continuing a series, timed
 *         spawn → exit; fails loud unless it exited 0, printed ok, wrote nothing on stderr, and (telemetry on) exported
 *         traces and metrics to the receiver
 * .why = a run that did not export, or warned that its store or collector failed, measures something else
 */
const runAct = async (input: { peer: Peer; servers: Servers; config: Config; place: Workspace; onSeries?: string }): Promise<number> => {
  const { peer, servers, config, place } = input;
  const store = config === 'store' || config === 'both';
  const telemetry = config === 'telemetry' || config === 'both';
  const task = peer.task({ prompt: 'hi', standinUrl: servers.standin.url, home: place.home });
  const before = { ...servers.receiver.received };
  const run = await runMeasured({
    command: task.command,
    args: [...task.args, ...(input.onSeries ? ['--on-series', input.onSeries] : [])],
    env: {
      ...task.env,
      ...(store
        ? {
            BHRAIN_STORE: `s3://${BUCKET}/${place.prefix}`,
            BHRAIN_S3_ENDPOINT: servers.s3.endpoint,
            AWS_ACCESS_KEY_ID: S3RVER_KEY,
            AWS_SECRET_ACCESS_KEY: S3RVER_KEY,
            // the machine's own AWS files and the instance metadata service are never consulted
            AWS_CONFIG_FILE: join(place.home, 'no-aws-config'),
            AWS_SHARED_CREDENTIALS_FILE: join(place.home, 'no-aws-credentials'),
            AWS_EC2_METADATA_DISABLED: 'true',
          }
        : {}),
      ...(telemetry ? { BHRAIN_TELEMETRY: '1', OTEL_EXPORTER_OTLP_ENDPOINT: servers.receiver.url } : {}),
    },
    cwd: place.cwd,
    timeoutMs: 60_000,
    sampleRss: false,
  });
  const what = `${config} one-turn${input.onSeries ? ' continuing a series' : ''}`;
  if (run.code !== 0 || run.stdout.trim() !== 'ok' || run.stderr.trim() !== '')
    throw new Error(
      `${what} exited ${run.code} after ${Math.round(run.wallMs)} ms, stdout ${JSON.stringify(run.stdout.slice(-200))}, stderr ${JSON.stringify(run.stderr.trim().slice(-300))}`,
    );
  const { traces, metrics } = servers.receiver.received;
  if (telemetry && (traces === before.traces || metrics === before.metrics))
    throw new Error(
      `${what} exported ${traces - before.traces} trace and ${metrics - before.metrics} metric request(s) to the receiver: it must export both`,
    );
  if (!telemetry && (traces !== before.traces || metrics !== before.metrics))
    throw new Error(`${what} exported telemetry with telemetry off`);
  return run.wallMs;
};

/** .what = the one series a run left in its store (the local one or its bucket prefix), failing loud when not just one */
const seriesOf = async (servers: Servers, place: Workspace, store: boolean, expected: number): Promise<string[]> => {
  const found = store ? await servers.s3.seriesIn(place.prefix) : await localSeries(place);
  if (found.length !== expected)
    throw new Error(
      `expected ${expected} series in the ${store ? `bucket prefix ${place.prefix}` : `local store of ${place.home}`}, found ${found.length}`,
    );
  return found;
};

/** .what = the walls of one round, or of the warm-up */
interface RoundWalls {
  configs: Record<Config, number>;
  continueLocal: number;
  continueStore: number;
}

/**
 * .what = one round: the four configurations in an order that rotates each round, then a continue of the plain run's
 *         series in its home (local) and of the store run's series from its bucket prefix, their order swapped each round
 * .why = rotation spreads drift in the machine's load over all four; each continue reads a one-turn series the round just
 *        wrote, so every round reads the same amount
 */
const runRound = async (peer: Peer, servers: Servers, round: number): Promise<RoundWalls> => {
  // reset() also drops the responder: every request is answered "ok" again
  servers.standin.reset();
  servers.standin.respond = () => ({ text: 'ok' });
  const places = Object.fromEntries(
    await Promise.all(CONFIGS.map(async (config) => [config, await genWorkspace(`r${round}-${config}`)] as const)),
  ) as Record<Config, Workspace>;
  try {
    const configs = {} as Record<Config, number>;
    for (let index = 0; index < CONFIGS.length; index++) {
      const config = CONFIGS[(index + Math.max(round, 0)) % CONFIGS.length];
      configs[config] = await runAct({ peer, servers, config, place: places[config] });
    }
    // the plain run's series is on its disk only, the store run's in the bucket only
    const [local] = await seriesOf(servers, places.plain, false, 1);
    const [remote] = await seriesOf(servers, places.store, true, 1);
    await seriesOf(servers, places.store, false, 0);
    const continueOne = async (store: boolean) => {
      const wall = await runAct({
        peer,
        servers,
        config: store ? 'store' : 'plain',
        place: store ? places.store : places.plain,
        onSeries: store ? remote : local,
      });
      // the model got the earlier turn: the user's hi, the answer ok, the new hi
      const sent = servers.standin.requests.at(-1)?.body as { messages?: unknown[] } | undefined;
      if (sent?.messages?.length !== 3)
        throw new Error(
          `the ${store ? 'store' : 'local'} continue sent ${sent?.messages?.length} message(s), not the 3 of a continued one-turn series`,
        );
      await seriesOf(servers, store ? places.store : places.plain, store, 2);
      return wall;
    };
    const order = round % 2 ? [true, false] : [false, true];
    const walls = { continueLocal: 0, continueStore: 0 };
    for (const store of order) walls[store ? 'continueStore' : 'continueLocal'] = await continueOne(store);
    return { configs, ...walls };
  } finally {
    await Promise.all(Object.values(places).map(dropWorkspace));
  }
};

/**
 * .what = a one-turn `act --input hi` plain, with an S3 store, with telemetry on, and with both, alternating round by
 *         round after an untimed warm-up, and a run continuing a series from the local store vs the S3 store: median
 *         and min–max of each, and what each costs over plain (over local for the continue)
 * .why = with both configured, the bench shows their cost per run
 */
export const benchFleet = async (options: BenchOptions): Promise<BenchSection> => {
  const rounds = options.smoke ? 1 : FULL_ROUNDS;
  const notes: string[] = [];
  const peer = genPeers().find((candidate) => candidate.name === B)!;
  const walls: Record<Config | 'continueLocal' | 'continueStore', number[]> = {
    plain: [],
    store: [],
    telemetry: [],
    both: [],
    continueLocal: [],
    continueStore: [],
  };
  const started: Array<{ close: () => Promise<void> }> = [];
  try {
    const standin = await startStandin({ cacheMinTokens: 1024 });
    started.push(standin);
    const receiver = await startReceiver();
    started.push(receiver);
    const s3 = await startS3();
    started.push(s3);
    const servers = { standin, receiver, s3 };
    // untimed: the bundle, the AWS SDK and the OpenTelemetry modules into the page cache before round 1
    if (!options.smoke) await runRound(peer, servers, -1);
    for (let round = 0; round < rounds; round++) {
      const got = await runRound(peer, servers, round);
      for (const config of CONFIGS) walls[config].push(got.configs[config]);
      walls.continueLocal.push(got.continueLocal);
      walls.continueStore.push(got.continueStore);
      options.log(
        `  fleet: round ${round + 1}/${rounds}: ${CONFIGS.map((config) => `${config} ${Math.round(got.configs[config])} ms`).join(', ')}, continue local ${Math.round(got.continueLocal)} ms, store ${Math.round(got.continueStore)} ms`,
      );
    }
  } catch (error) {
    // a failed run leaves the rows empty (not measured) rather than half-filled from fewer rounds than the others
    notes.push(`not measured: ${error instanceof Error ? error.message : String(error)}`);
    for (const key of Object.keys(walls) as Array<keyof typeof walls>) walls[key] = [];
  } finally {
    for (const server of started.reverse()) await server.close();
  }
  const costOver = (values: number[], base: number[]) => {
    const [of, under] = [median(values), median(base)];
    return of === null || under === null ? null : roundTenth(of - under);
  };
  const rows: BenchRow[] = [
    ...CONFIGS.map((config) => {
      const row = spreadRow(`one-turn \`act --input hi\`, spawn → exit: ${LABELS[config]}`, 'ms', walls[config]);
      return config === 'plain' ? row : { ...row, values: { ...row.values, [COST]: costOver(walls[config], walls.plain) } };
    }),
    spreadRow('`act --input hi --on-series <hash>`, continuing a one-turn series: local ref store', 'ms', walls.continueLocal),
    (() => {
      const row = spreadRow('`act --input hi --on-series <hash>`, continuing a one-turn series: S3 store', 'ms', walls.continueStore);
      return { ...row, values: { ...row.values, [COST]: costOver(walls.continueStore, walls.continueLocal) } };
    })(),
  ];
  notes.push(
    `${rounds} round(s)${options.smoke ? '' : ' after one untimed round'}; each round runs \`bhrain act --atom claude/haiku --input hi --quiet\` (the one-turn section's bhrain row, against the stand-in answering "ok") in four configurations, in an order that rotates each round: plain; with the ref store in S3 (\`BHRAIN_STORE=s3://${BUCKET}/<prefix>\`, \`BHRAIN_S3_ENDPOINT\` at s3rver, AWS credentials in the environment); with telemetry on (\`BHRAIN_TELEMETRY=1\`, \`OTEL_EXPORTER_OTLP_ENDPOINT\` at a receiver in the bench process that answers 200 to /v1/traces and /v1/metrics); and with both. Then two runs continue a series (\`--on-series <hash>\`): the plain run's, from its local store, and the S3 run's, from its bucket prefix (loaded, verified against its hash, and the new series written back there), in an order swapped each round. Each configuration's run gets a fresh HOME (a continue runs in the HOME of the run it continues) and every run must exit 0 printing ok with nothing on stderr; a telemetry run must have exported traces and metrics, a store run must have left its series in the bucket and none on disk, a continue must have sent the earlier turn to the model. Median and min–max over the rounds; the cost column is the difference of medians, over plain for the three configurations, over the local continue for the S3 continue`,
    `s3rver and the receiver run on 127.0.0.1 beside bhrain, with zero network latency: the rows are bhrain's own cost per run (loading the AWS SDK or the OpenTelemetry exporters, signing and sending, waiting for the answers); a real bucket or collector adds its network round trips on top, one per request the store or the exporters send`,
  );
  return { title: 'Fleet: the cost per run of a shared S3 ref store and of telemetry', rows, notes };
};

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { genMcpToolBox, type McpServerConfig } from 'rhachet-roles-bhrain';

import { startStandin, type Standin } from '../../test/standin/standin.js';
import { median, spreadRow, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';
import { findPackageRoot } from '../peers.js';

/** timed runs per subject in a full run; the subjects alternate, so drift in the machine's load hits all alike */
const FULL_RUNS = 9;

/** the target: servers start concurrently, so a second server adds less than this share of one server's start */
const TARGET_ADDS_SHARE = 0.5;

/** a start or a CLI run that takes longer than this is a failure, not a measurement */
const RUN_TIMEOUT_MS = 60_000;

const require = createRequire(import.meta.url);

/** .what = the entry script a package declares as its bin, resolved from node_modules (run with node, never npx) */
const resolveBin = (pkg: string): string => {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin: string | Record<string, string> };
  const relative = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0];
  return join(dirname(manifestPath), relative);
};

/** .what = the servers measured: stdio configs whose argv carries the bench's temp dir, so a leaked process is findable */
interface McpWorld {
  dir: string;
  everything: McpServerConfig;
  filesystem: McpServerConfig;
  env: Record<string, string | undefined>;
}

const genMcpWorld = async (): Promise<McpWorld> => {
  const dir = await mkdtemp(join(tmpdir(), 'bhrain-bench-mcp-'));
  const workspace = join(dir, 'workspace');
  await mkdir(workspace);
  await writeFile(join(workspace, 'hello.txt'), 'hello\n');
  return {
    dir,
    // server-everything reads only its first arg (the transport): the second is our marker
    everything: { command: process.execPath, args: [resolveBin('@modelcontextprotocol/server-everything'), 'stdio', dir] },
    filesystem: { command: process.execPath, args: [resolveBin('@modelcontextprotocol/server-filesystem'), workspace] },
    env: { PATH: process.env.PATH, HOME: dir },
  };
};

/** .what = the pids of processes whose command line contains the marker (this bench's temp dir) */
const findProcessesWith = async (marker: string): Promise<number[]> => {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const lines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
  // the marker is an arg of its own (everything) or the parent of one (filesystem's workspace)
  const holds = (line: string) => line.split('\0').some((arg) => arg === marker || arg.startsWith(`${marker}/`));
  return pids.filter((pid, index) => Number(pid) !== process.pid && holds(lines[index])).map(Number);
};

/** .what = fails loud when a server outlived what should have ended it; the bench must not leave processes behind */
const expectNoServerLeft = async (world: McpWorld, after: string): Promise<void> => {
  const left = await findProcessesWith(world.dir);
  if (left.length)
    throw new Error(
      `${left.length} MCP server process(es) (pids ${left.join(', ')}) still ran after ${after}: the group kill did not reach them`,
    );
};

/** clock ticks per second of /proc/<pid>/stat's utime and stime */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** .what = the CPU time (user + sys) a live process has used so far, in ms */
const readCpuMs = async (pid: number): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // fields after the ')' that ends the command name: utime and stime are the 12th and 13th
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
};

/** .what = one library subject: the servers started at once, timed from the calls to every box resolving, then closed */
interface StartSubject {
  name: string;
  servers: Array<{ name: string; transport: McpServerConfig }>;
}

/**
 * .what = starts the subject's servers concurrently with genMcpToolBox (Promise.all), times to all resolved (connected,
 *         tools listed), then closes them (timed apart) and checks no server process is left
 * .why = this is what a session waits for before its first model request, per server count
 */
const timeStart = async (subject: StartSubject, world: McpWorld): Promise<{ startMs: number; closeMs: number; cpuMs: number }> => {
  const started = performance.now();
  const settled = await Promise.allSettled(subject.servers.map((server) => genMcpToolBox(server, { cwd: world.dir, env: world.env })));
  const startMs = performance.now() - started;
  const boxes = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  // the servers' own CPU by tools listed: what concurrency has to fit on the cores there are
  const cpuMs = (await Promise.all(boxes.map((box) => (box.pid ? readCpuMs(box.pid).catch(() => 0) : 0)))).reduce(
    (sum, value) => sum + value,
    0,
  );
  const closing = performance.now();
  await Promise.all(boxes.map((box) => box.close()));
  const closeMs = performance.now() - closing;
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw new Error(`${subject.name}: a server did not start: ${(failed.reason as Error).message}`);
  for (const box of boxes) {
    // a box that resolved with no tools measured nothing real: server-everything and server-filesystem both list tools
    if (!box.definitions.length || !box.definitions.every((tool) => tool.name.startsWith(`mcp__${box.server}__`)))
      throw new Error(
        `${subject.name}: server ${box.server} resolved with tools [${box.definitions.map((tool) => tool.name).join(', ')}], expected mcp__${box.server}__*`,
      );
  }
  await expectNoServerLeft(world, `close() of ${subject.name}`);
  return { startMs, closeMs, cpuMs };
};

/**
 * .what = the floor: the bare SDK (Client + StdioClientTransport) on the same server, timed from construction to tools/list
 *         answered, then closed (untimed)
 * .why = what no wrapper over the official client can beat on this machine: bhrain's overhead is its start minus this
 */
const timeFloorStart = async (world: McpWorld): Promise<number> => {
  // loaded here, as genMcpToolBox loads it: only the MCP section pays for the SDK
  const [{ Client }, { StdioClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
  ]);
  const config = world.everything as { command: string; args: string[] };
  const started = performance.now();
  const client = new Client({ name: 'bhrain-bench-floor', version: '0.0.0' });
  try {
    await client.connect(
      new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: world.env as Record<string, string>,
        cwd: world.dir,
        stderr: 'pipe',
      }),
    );
    const { tools } = await client.listTools();
    const elapsedMs = performance.now() - started;
    if (!tools.length) throw new Error('floor: server-everything listed no tools');
    return elapsedMs;
  } finally {
    await client.close();
  }
};

/** .what = one CLI run's wall time, its exit and output */
const runCli = (input: {
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
}): Promise<{ wallMs: number; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(findPackageRoot(), 'bin', 'bhrain'), ...input.args], {
      cwd: input.cwd,
      env: input.env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ wallMs: performance.now() - started, code, signal, stdout, stderr });
    });
  });

/** .what = the CLI subjects: `bhrain act --input hi` with this many servers from --mcp-config */
const CLI_SERVER_COUNTS = [0, 1, 2] as const;

/**
 * .what = one `bhrain act --input hi` run with 0, 1 or 2 servers, timed spawn to exit; the stand-in answers 'ok'
 * .why = the user's view: what MCP servers add to a whole run, start-up and shutdown included
 */
const timeCliRun = async (count: number, world: McpWorld, standin: Standin, home: string): Promise<number> => {
  const servers = (
    [
      ['everything', world.everything],
      ['filesystem', world.filesystem],
    ] as Array<[string, McpServerConfig]>
  ).slice(0, count);
  const configPath = join(world.dir, `mcp-${count}.json`);
  await writeFile(configPath, JSON.stringify({ mcpServers: Object.fromEntries(servers) }));
  standin.reset();
  standin.respond = () => ({ text: 'ok' });
  const run = await runCli({
    args: ['act', '--atom', 'claude/haiku', '--input', 'hi', '--quiet', ...(count ? ['--mcp-config', configPath] : [])],
    cwd: join(world.dir, 'workspace'),
    env: {
      PATH: process.env.PATH,
      HOME: home,
      BHRAIN_HOME: join(home, '.bhrain'),
      BHRAIN_CONFIG_DIR: join(home, 'config'),
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: standin.url,
    },
  });
  if (run.code !== 0 || run.stdout !== 'ok\n')
    throw new Error(
      `bhrain act with ${count} server(s) exited ${run.code ?? `on ${run.signal}`} after ${Math.round(run.wallMs)} ms, stdout ${JSON.stringify(run.stdout)}: ${run.stderr.trim().slice(-500)}`,
    );
  // the run must have offered every configured server's tools, or it measured a run without them
  const offered: string[] = (standin.requests[0]?.body.tools ?? []).map((tool: { name: string }) => tool.name);
  for (const [name] of servers)
    if (!offered.some((tool) => tool.startsWith(`mcp__${name}__`)))
      throw new Error(
        `bhrain act with ${count} server(s) did not offer mcp__${name}__* tools to the model (offered: ${offered.join(', ')})`,
      );
  if (!count && offered.some((tool) => tool.startsWith('mcp__')))
    throw new Error(`bhrain act without --mcp-config offered MCP tools: ${offered.join(', ')}`);
  await expectNoServerLeft(world, `bhrain act with ${count} server(s) exited`);
  return run.wallMs;
};

/**
 * .what = MCP start-up section: one stdio server's start through genMcpToolBox (dist/index.js), two started at once and what
 *         the second adds, close(), and `bhrain act` wall time with 0, 1 and 2 servers from --mcp-config
 * .why = the target: servers start concurrently, so a second server adds less than half of one server's start
 */
export const benchMcp = async (options: BenchOptions): Promise<BenchSection> => {
  const runs = options.smoke ? 1 : FULL_RUNS;
  const world = await genMcpWorld();
  const subjects: StartSubject[] = [
    { name: 'one server (everything)', servers: [{ name: 'everything', transport: world.everything }] },
    {
      name: 'two at once (everything + filesystem)',
      servers: [
        { name: 'everything', transport: world.everything },
        { name: 'filesystem', transport: world.filesystem },
      ],
    },
    {
      name: 'two at once (everything × 2)',
      servers: [
        { name: 'everything', transport: world.everything },
        { name: 'everything2', transport: world.everything },
      ],
    },
  ];
  const starts: number[][] = subjects.map(() => []);
  const floors: number[] = [];
  const closes: number[] = [];
  const serverCpus: number[] = [];
  const loadAtStart = loadavg()[0];
  const cliWalls: number[][] = CLI_SERVER_COUNTS.map(() => []);
  const notes: string[] = [];
  let cliMeasured = true;
  try {
    try {
      // untimed warm-up of each subject: pages node, the SDK and the servers' modules in
      for (const subject of subjects) await timeStart(subject, world);
      await timeFloorStart(world);
      await expectNoServerLeft(world, 'the floor client closed');
      for (let run = 0; run < runs; run++) {
        // rotate the order each run (the floor is the fourth subject), so no subject always goes first
        for (let step = 0; step <= subjects.length; step++) {
          const index = (run + step) % (subjects.length + 1);
          if (index === subjects.length) {
            floors.push(await timeFloorStart(world));
            await expectNoServerLeft(world, 'the floor client closed');
            continue;
          }
          const { startMs, closeMs, cpuMs } = await timeStart(subjects[index], world);
          starts[index].push(startMs);
          if (index === 0) {
            closes.push(closeMs);
            serverCpus.push(cpuMs);
          }
        }
        options.log(
          `mcp: run ${run + 1}/${runs}: ${subjects.map((subject, index) => `${subject.name} ${Math.round(starts[index].at(-1)!)} ms`).join(', ')}, floor ${Math.round(floors.at(-1)!)} ms`,
        );
      }
    } catch (error) {
      for (const values of [...starts, closes, serverCpus, floors]) values.length = 0;
      notes.push(`not measured (library): ${(error as Error).message}`);
    }
    // the CLI row needs --mcp-config: without the flag there is nothing to measure
    const help = await runCli({ args: ['act', '--help'], cwd: world.dir, env: { PATH: process.env.PATH, HOME: world.dir } });
    if (!help.stdout.includes('--mcp-config')) {
      cliMeasured = false;
      notes.push('the CLI rows are left out: `bhrain act --help` lists no --mcp-config flag in this build');
    } else {
      const standin = await startStandin({ apiKey: 'bench' });
      const home = await mkdtemp(join(tmpdir(), 'bhrain-bench-mcp-home-'));
      try {
        for (const count of CLI_SERVER_COUNTS) await timeCliRun(count, world, standin, home);
        for (let run = 0; run < runs; run++) {
          for (let step = 0; step < CLI_SERVER_COUNTS.length; step++) {
            const index = (run + step) % CLI_SERVER_COUNTS.length;
            cliWalls[index].push(await timeCliRun(CLI_SERVER_COUNTS[index], world, standin, home));
          }
          options.log(
            `mcp: CLI run ${run + 1}/${runs}: ${CLI_SERVER_COUNTS.map((count, index) => `${count} server(s) ${Math.round(cliWalls[index].at(-1)!)} ms`).join(', ')}`,
          );
        }
      } catch (error) {
        for (const values of cliWalls) values.length = 0;
        notes.push(`not measured (CLI): ${(error as Error).message}`);
      } finally {
        await standin.close();
        await rm(home, { recursive: true, force: true });
      }
    }
  } finally {
    await rm(world.dir, { recursive: true, force: true });
  }
  const [one, mixed, twin] = starts;
  const oneMs = median(one);
  const addsTarget = {
    text: `< ${TARGET_ADDS_SHARE} × one server's start`,
    met: (value: number) => oneMs !== null && value < TARGET_ADDS_SHARE * oneMs,
  };
  const rows: BenchRow[] = [
    spreadRow('one stdio server: genMcpToolBox → connected + tools listed (server-everything)', 'ms', one),
    spreadRow('floor: bare SDK Client + StdioClientTransport → tools listed (same server)', 'ms', floors),
    spreadRow(
      'bhrain overhead (one − floor, per run)',
      'ms',
      one.map((value, index) => value - floors[index]),
    ),
    spreadRow('two servers at once (everything + filesystem): wall', 'ms', mixed),
    spreadRow(
      'second server adds (everything + filesystem − one, per run)',
      'ms',
      mixed.map((value, index) => value - one[index]),
      addsTarget,
    ),
    spreadRow('two servers at once (everything × 2): wall', 'ms', twin),
    spreadRow(
      'second server adds (everything × 2 − one, per run)',
      'ms',
      twin.map((value, index) => value - one[index]),
      addsTarget,
    ),
    spreadRow('CPU (user + sys) of that server process by tools listed', 'ms', serverCpus),
    spreadRow('close(): one stdio server, its process group killed', 'ms', closes),
  ];
  if (cliMeasured) {
    CLI_SERVER_COUNTS.forEach((count, index) =>
      rows.push(spreadRow(`bhrain act --input hi, ${count} server(s) via --mcp-config: wall`, 'ms', cliWalls[index])),
    );
    const [none, single, double] = cliWalls;
    rows.push(
      spreadRow(
        'bhrain act: the first server adds (1 server − 0, per run)',
        'ms',
        single.map((value, index) => value - none[index]),
      ),
      spreadRow(
        'bhrain act: the second server adds (2 servers − 1, per run)',
        'ms',
        double.map((value, index) => value - single[index]),
      ),
    );
  }
  notes.push(
    `${runs} timed run(s) per subject after one untimed warm-up of each; the subjects alternate (one, two mixed, two alike, floor; the order rotates each run), so "second server adds" is each two-server run minus the one-server run of the same round`,
    'start: from calling genMcpToolBox (imported from dist/index.js) to its resolution, which waits for the MCP initialize handshake and tools/list; both servers run from node_modules with node (server-everything in stdio mode, server-filesystem on a temp dir), and every run is followed by close() and a check that no server process is left',
    `the machine: ${cpus().length} core(s), 1-minute load average ${loadAtStart.toFixed(2)} when the section started${
      oneMs !== null && median(serverCpus) !== null
        ? `; the server process used ${Math.round(median(serverCpus)!)} ms of CPU in its ${Math.round(oneMs)} ms start, so two servers start in the time of one only when a core is free for each`
        : ''
    }`,
    ...(cliMeasured
      ? [
          'CLI: `bhrain act --atom claude/haiku --input hi --quiet` spawned to exit against the stand-in answering "ok", with 0, 1 (everything) or 2 (everything + filesystem) servers, alternating; the first server\'s share includes loading the MCP SDK into bhrain, which a run without servers never does; each run checks that the servers\' tools reached the model and no server outlived the run',
        ]
      : []),
  );
  return { title: 'MCP servers: start-up cost, concurrency, and the CLI run', rows, notes };
};

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { genBrainCli } from 'rhachet-roles-bhrain';

import { CLAUDE_CLI_API_KEY, genClaudeCliWorld } from '../../test/standin/genClaudeCliWorld.js';
import { startStandin } from '../../test/standin/standin.js';
import { median, spreadRow, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';
import { findPackageRoot } from '../peers.js';

/** timed boots per subject in a full run; bhrain and the floor alternate, so drift in the machine's load hits both alike */
const FULL_RUNS = 9;

/** the targets: dispatch is ready this fast, and the library costs at most this much memory once booted */
const TARGET_BOOT_MS = 250;
const TARGET_RSS_MB = 150;

/** a boot or an initialize that takes longer than this is a failure, not a measurement */
const RUN_TIMEOUT_MS = 30_000;

const INITIALIZE = `${JSON.stringify({ type: 'control_request', request_id: 'r1', request: { subtype: 'initialize' } })}\n`;
type CliWorld = Awaited<ReturnType<typeof genClaudeCliWorld>>;

/** .what = the binary and argv genBrainCli spawned for dispatch, read from /proc while it runs */
interface DispatchCommand {
  command: string;
  args: string[];
}

/**
 * .what = one bhrain boot: executor.boot({ mode: 'dispatch' }) timed to its resolution, then kill() (untimed)
 * .why = boot resolves once the CLI answered `initialize`, so this is what a caller waits for before its first ask
 */
const timeBhrainBoot = async (world: CliWorld): Promise<{ elapsedMs: number; command: DispatchCommand }> => {
  const handle = genBrainCli({ slug: 'claude/haiku' }, { cwd: world.cwd, env: world.env });
  try {
    const started = performance.now();
    await handle.executor.boot({ mode: 'dispatch' });
    const elapsedMs = performance.now() - started;
    if (handle.mode !== 'dispatch' || !handle.pid)
      throw new Error(`boot resolved without a dispatch process (mode ${handle.mode}, pid ${handle.pid})`);
    // the floor replays exactly what genBrainCli spawned, so a change to its args moves both subjects
    const argv = (await readFile(`/proc/${handle.pid}/cmdline`, 'utf8')).split('\0').slice(0, -1);
    return { elapsedMs, command: { command: await readlink(`/proc/${handle.pid}/exe`), args: argv.slice(1) } };
  } finally {
    await handle.executor.kill();
  }
};

/**
 * .what = the floor: the bare CLI spawned with the same dispatch args, timed from spawn to its `control_response` to
 *         `initialize`; then its process group is killed (untimed)
 * .why = what no wrapper can beat on this machine: bhrain's overhead is its boot minus this
 */
const timeBareInitialize = (world: CliWorld, command: DispatchCommand): Promise<number> =>
  new Promise((resolve, reject) => {
    // a fresh session id per run: the CLI refuses an id another process holds
    const args = command.args.map((arg, index) => (command.args[index - 1] === '--session-id' ? randomUUID() : arg));
    const started = performance.now();
    const child = spawn(command.command, args, {
      cwd: world.cwd,
      env: world.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let elapsedMs: number | null = null;
    let lines = '';
    let stderr = '';
    const stop = () => {
      // never a group of pid 1 or less (an unspawned child has none)
      if (!child.pid || child.pid <= 1) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(stop, RUN_TIMEOUT_MS);
    child.stdin.on('error', () => {});
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
    let refused: string | null = null;
    child.stdout.on('data', (chunk: Buffer) => {
      lines += chunk.toString('utf8');
      if (elapsedMs !== null || refused !== null) return;
      // complete lines only: a long response arrives in several chunks
      const response = lines
        .slice(0, lines.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((line) => line.startsWith('{"type":"control_response"'))
        .map((line) => (JSON.parse(line) as { response: { subtype: string; request_id: string; error?: string } }).response)
        .find((candidate) => candidate.request_id === 'r1');
      if (!response) return;
      // the CLI answers any control request, an unknown one with an error: only a success is ready
      if (response.subtype === 'success') elapsedMs = performance.now() - started;
      else refused = response.error ?? response.subtype;
      stop();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (elapsedMs !== null) resolve(elapsedMs);
      else if (refused !== null) reject(new Error(`the bare CLI refused initialize: ${refused}`));
      else
        reject(
          new Error(
            `the bare CLI ended (code ${code}, signal ${signal}) without a control_response: ${(stderr || lines).trim().slice(-500)}`,
          ),
        );
    });
    child.stdin.write(INITIALIZE);
  });

/** the child that measures RSS: imports the built library, boots dispatch, prints its own RSS, kills the CLI */
const RSS_PROBE = `
const { distUrl, cwd, env } = JSON.parse(process.env.BHRAIN_BENCH_PROBE);
const { genBrainCli } = await import(distUrl);
const handle = genBrainCli({ slug: 'claude/haiku' }, { cwd, env });
await handle.executor.boot({ mode: 'dispatch' });
const rss = process.memoryUsage().rss;
const booted = handle.mode === 'dispatch' && handle.pid !== null;
await handle.executor.kill();
process.stdout.write(JSON.stringify({ rss, booted }));
`;

/**
 * .what = RSS of a fresh node process that imported dist/index.js and booted dispatch, in MB (the CLI is another process)
 * .why = what embedding bhrain's BrainCli costs the caller's own process
 */
const measureRssAfterBoot = (world: CliWorld): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = JSON.stringify({
      distUrl: pathToFileURL(join(findPackageRoot(), 'dist', 'index.js')).href,
      cwd: world.cwd,
      env: world.env,
    });
    const child = spawn(process.execPath, ['--input-type=module', '-e', RSS_PROBE], {
      cwd: world.cwd,
      env: { PATH: process.env.PATH, HOME: world.home, BHRAIN_BENCH_PROBE: probe },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        const { rss, booted } = JSON.parse(stdout) as { rss: number; booted: boolean };
        if (code !== 0 || !booted) throw new Error(`booted ${booted}`);
        resolve(rss / 1024 / 1024);
      } catch (error) {
        reject(new Error(`the RSS probe failed (exit ${code}, ${(error as Error).message}): ${(stderr || stdout).trim().slice(-500)}`));
      }
    });
  });

/**
 * .what = BrainCli boot section: boot → ready in dispatch through the built library vs the bare CLI answering `initialize`,
 *         bhrain's overhead over that floor, and the caller's RSS once booted
 * .why = the targets: dispatch ready in ≤ 250 ms, the library under 150 MB; the floor says how much of it is ours
 */
export const benchBrainCli = async (options: BenchOptions): Promise<BenchSection> => {
  const runs = options.smoke ? 1 : FULL_RUNS;
  const standin = await startStandin({ apiKey: CLAUDE_CLI_API_KEY });
  const world = await genClaudeCliWorld({ standinUrl: standin.url });
  const boots: number[] = [];
  const floors: number[] = [];
  const rss: number[] = [];
  const notes: string[] = [];
  try {
    // untimed warm-up of each: pages the CLI binary in, and captures the args genBrainCli spawns for the floor to replay
    const { command } = await timeBhrainBoot(world);
    await timeBareInitialize(world, command);
    for (let run = 0; run < runs; run++) {
      boots.push((await timeBhrainBoot(world)).elapsedMs);
      floors.push(await timeBareInitialize(world, command));
      options.log(`brainCli: run ${run + 1}/${runs}: boot ${Math.round(boots.at(-1)!)} ms, floor ${Math.round(floors.at(-1)!)} ms`);
    }
    for (let run = 0; run < runs; run++) rss.push(await measureRssAfterBoot(world));
    options.log(`brainCli: RSS after boot ${rss.map((value) => Math.round(value)).join(', ')} MB`);
    const shownArgs = command.args.map((arg, index) => (command.args[index - 1] === '--session-id' ? '<uuid>' : arg));
    notes.push(
      `${runs} timed run(s) per subject, alternating bhrain, floor, bhrain, floor … after one untimed warm-up of each; the CLI is ${command.command} with ${shownArgs.join(' ')}`,
    );
    const floorMs = median(floors);
    if (floorMs !== null && floorMs > TARGET_BOOT_MS)
      notes.push(
        `the floor alone (${Math.round(floorMs)} ms) is over the ${TARGET_BOOT_MS} ms target on this machine: a miss there is the CLI's own startup, and the overhead row is bhrain's share`,
      );
  } catch (error) {
    boots.length = floors.length = rss.length = 0;
    notes.push(`not measured: ${(error as Error).message}`);
  } finally {
    await standin.close();
    await Promise.all([rm(world.home, { recursive: true, force: true }), rm(world.cwd, { recursive: true, force: true })]);
  }
  const rows: BenchRow[] = [
    spreadRow('boot → ready, dispatch: bhrain (genBrainCli from dist/index.js)', 'ms', boots, {
      text: `≤ ${TARGET_BOOT_MS} ms`,
      met: (value) => value <= TARGET_BOOT_MS,
    }),
    spreadRow('boot → ready, dispatch: floor (bare CLI, spawn → control_response to initialize)', 'ms', floors),
    spreadRow(
      'bhrain overhead (boot − floor, per alternating pair)',
      'ms',
      boots.map((boot, index) => boot - floors[index]),
    ),
    spreadRow('RSS of the caller after boot (fresh node, CLI excluded)', 'MB', rss, {
      text: `< ${TARGET_RSS_MB} MB`,
      met: (value) => value < TARGET_RSS_MB,
    }),
  ];
  notes.push(
    'boot → ready: from calling executor.boot({ mode: "dispatch" }) to its resolution (it resolves once the CLI has answered a stream-json initialize control request); kill() follows, untimed',
    'floor: the same binary, args and env spawned directly, `initialize` written to its stdin at once, timed to its successful control_response; bhrain overhead is each bhrain run minus the floor run after it',
    `RSS: process.memoryUsage().rss of a fresh node process that imported dist/index.js, created a handle and booted dispatch (${runs} process(es)); the CLI's own memory is another process and not counted`,
  );
  return { title: 'BrainCli boot: dispatch ready, vs the bare Claude Code CLI', rows, notes };
};

import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { genBashToolBox, startDomainProxy, type BhrainToolBox, type BrainLog, type DomainProxy } from 'rhachet-roles-bhrain';

import { median, type BenchOptions, type BenchRow, type BenchSection } from '../BenchReport.js';
import { timeMaskedRequests } from './timeMaskedRequests.js';

/** timed calls per mode in a full run; the modes alternate, so drift in the machine's load hits both alike */
const FULL_RUNS = 41;

/** the target: the sandbox costs at most this much per call */
const TARGET_OVERHEAD_MS = 15;

const silentLog: BrainLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** .what = the value at a fraction of the sorted values (nearest rank), rounded to 0.1 */
const percentile = (values: readonly number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]! * 10) / 10;
};

const round = (value: number): number => Math.round(value * 10) / 10;

/** .what = one bash call through the toolbox, timed end to end (spawn, sandbox setup, exit, format) */
const timeCall = async (box: BhrainToolBox, cwd: string): Promise<number> => {
  const started = performance.now();
  const result = await box.execute(
    { call: { id: 'bench-bash', name: 'bash', input: { command: 'true' } } },
    { cwd, log: silentLog, env: process.env },
  );
  const elapsedMs = performance.now() - started;
  if (!result.success) throw new Error(`bash true failed: ${result.output}`);
  return elapsedMs;
};

const OFF = 'off';
const KEPT = 'workspace-write, in the kept sandbox';
const FIRST = "workspace-write, a toolbox's first call";
const KEPT_DOMAIN = 'workspace-write, kept, one domain allowed';
const KEPT_TREE = 'workspace-write, kept, in this checkout';
const MODES = [OFF, KEPT, FIRST, KEPT_DOMAIN, KEPT_TREE] as const;

/** .what = the directories under a root (not entering .git's objects, refs and logs, as the protected-path sweep does not) */
const countDirs = (root: string): number => {
  let count = 0;
  const pending = [root];
  while (pending.length) {
    const dir = pending.pop()!;
    count++;
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory() && !(dir.endsWith('/.git') && ['objects', 'refs', 'logs'].includes(entry.name)))
        pending.push(join(dir, entry.name));
  }
  return count;
};

/**
 * .what = sandbox section: the wall time of one bash `true` call with the sandbox off vs workspace-write (bubblewrap),
 *         the sandboxed call both in the sandbox kept from the toolbox's last call and as a toolbox's first call, and in
 *         a kept sandbox whose network opens by domain (the proxy serving the sandbox's 127.0.0.1:3128)
 * .why = the target: bash in the sandbox costs at most 15 ms more per call than unconfined; a toolbox keeps its
 *        sandbox between calls, so only its first call pays for bubblewrap's start
 */
export const benchSandbox = async (options: BenchOptions): Promise<BenchSection> => {
  const runs = options.smoke ? 3 : FULL_RUNS;
  const cwd = await mkdtemp(join(tmpdir(), 'bhrain-bench-sandbox-'));
  const off = genBashToolBox({ sandbox: { mode: 'off' } });
  const sandboxed = genBashToolBox({ sandbox: { mode: 'workspace-write' } });
  const times: Record<(typeof MODES)[number], number[]> = { [OFF]: [], [KEPT]: [], [FIRST]: [], [KEPT_DOMAIN]: [], [KEPT_TREE]: [] };
  // the checkout the bench runs in (node_modules included): what the protected-path sweep after each call reads grows
  // with the number of directories of the working directory
  const checkout = process.cwd();
  const checkoutDirs = countDirs(checkout);
  const inCheckout = genBashToolBox({ sandbox: { mode: 'workspace-write' } });
  let unavailable: string | null = null;
  let proxy: DomainProxy | null = null;
  try {
    // the network by domain: the proxy outside, serving the listener the sandbox's forwarder hands it at the warm-up call
    proxy = await startDomainProxy({ allowedDomains: ['example.com'] });
    const byDomain = genBashToolBox({ sandbox: { mode: 'workspace-write', domainProxy: proxy } });
    // untimed warm-up: the first sandboxed call finds bwrap and proves it can create namespaces (once per process)
    for (const box of [off, sandboxed, byDomain]) await timeCall(box, cwd);
    await timeCall(inCheckout, checkout);
    for (let run = 0; run < runs; run++) {
      times[OFF].push(await timeCall(off, cwd));
      times[KEPT].push(await timeCall(sandboxed, cwd));
      times[KEPT_DOMAIN].push(await timeCall(byDomain, cwd));
      times[KEPT_TREE].push(await timeCall(inCheckout, checkout));
    }
    // last: each new toolbox's sandbox waits (idle) after its call, two more processes for the unconfined calls' scan
    for (let run = 0; run < runs; run++) times[FIRST].push(await timeCall(genBashToolBox({ sandbox: { mode: 'workspace-write' } }), cwd));
  } catch (error) {
    unavailable = (error as Error).message;
  } finally {
    await proxy?.close();
    await rm(cwd, { recursive: true, force: true });
  }
  const at = (fraction: number) => Object.fromEntries(MODES.map((mode) => [mode, unavailable ? null : percentile(times[mode], fraction)]));
  const medians = Object.fromEntries(MODES.map((mode) => [mode, unavailable ? null : round(median(times[mode])!)]));
  const overheadMs = unavailable ? null : round(medians[KEPT]! - medians[OFF]!);
  const domainOverheadMs = unavailable ? null : round(medians[KEPT_DOMAIN]! - medians[KEPT]!);
  const treeOverheadMs = unavailable ? null : round(medians[KEPT_TREE]! - medians[KEPT]!);
  options.log(`sandbox: bash true ${MODES.map((mode) => `${medians[mode] ?? '-'} ms ${mode}`).join(', ')} (${runs} run(s) each)`);
  const rows: BenchRow[] = [
    { metric: 'bash `true`: wall time per call, median', unit: 'ms', values: medians },
    { metric: 'bash `true`: wall time per call, p10', unit: 'ms', values: at(0.1) },
    { metric: 'bash `true`: wall time per call, p90', unit: 'ms', values: at(0.9) },
    {
      metric: 'sandbox overhead per call, in the kept sandbox (difference of medians)',
      unit: 'ms',
      values: { [`${KEPT} - off`]: overheadMs },
      target: { text: `<= ${TARGET_OVERHEAD_MS} ms per call`, met: overheadMs === null ? null : overheadMs <= TARGET_OVERHEAD_MS },
    },
    {
      metric: 'network by domain overhead per call, in the kept sandbox (difference of medians)',
      unit: 'ms',
      values: { 'one domain allowed - kept': domainOverheadMs },
    },
    {
      metric: `protected-path sweep per call, a checkout of ${checkoutDirs.toLocaleString('en-US')} directories vs an empty one (difference of medians)`,
      unit: 'ms',
      values: { 'in this checkout - kept': treeOverheadMs },
    },
  ];
  rows.push(...(await maskingRows(runs, options)));
  const notes = [
    `Each call is genBashToolBox's execute of \`true\`, end to end (sandbox setup when there is one to start, exit, format); ${runs} timed call(s) per column, after one untimed warm-up of each toolbox (the warm-up pays the one-time bwrap lookup and namespace probe). Unconfined calls alternate with calls of the sandboxed toolbox (in the sandbox it kept from its last call); then come the first calls of new sandboxed toolboxes, each starting its sandbox (a fork of this process, bubblewrap's namespaces and mounts, the supervisor). With the sandbox off, each call ends with a scan of /proc for processes that carry its tag. The kept sandbox with one domain allowed (example.com) alternates with the other two: its warm-up call started its proxy, and its sandbox, whose forwarder handed the proxy its listening socket before the first command and exited; a call there ends as in the other kept sandbox. Every sandbox runs under bhrain's seccomp filter (no host unix sockets). The kept sandbox in this checkout (${checkoutDirs.toLocaleString('en-US')} directories, node_modules included) alternates with them too: after each call, the sweep of the protected paths reads the ctime of every directory of the working directory (and again only the directories that changed), so its cost grows with the number of directories; its first call, untimed, walked the whole tree once.`,
  ];
  notes.push(
    `Masking: an https GET as a command's curl makes it (a CONNECT on the proxy's socket, a TLS handshake inside the tunnel, one request with a placeholder as its bearer token, the tunnel closed), ${runs} timed per column, alternating: to a host a credential is masked for (the proxy completes the client's TLS with the run CA's leaf, writes the value into the header and sends the request on over TLS of its own, its upstream connections kept alive between tunnels) and to a host that is not (a plain tunnel to the same server on the loopback). After one untimed request of each, which issues the masked host's leaf.`,
  );
  if (unavailable) notes.push(`the sandbox could not run here, so nothing was measured: ${unavailable}`);
  return { title: 'Sandbox: bash per-call cost, off vs workspace-write (bubblewrap)', rows, notes };
};

const MASKED = 'masked host (TLS terminated)';
const PLAIN = 'plain CONNECT';

/** .what = masking's rows: an https request through the proxy to a masked host vs over a plain tunnel, and the difference */
const maskingRows = async (runs: number, options: BenchOptions): Promise<BenchRow[]> => {
  const times = await timeMaskedRequests(runs).catch((error: Error) => {
    options.log(`sandbox: masking could not be measured: ${error.message}`);
    return null;
  });
  const of = (pick: (values: number[]) => number) =>
    times ? { [MASKED]: pick(times.masked), [PLAIN]: pick(times.plain) } : { [MASKED]: null, [PLAIN]: null };
  const medians = of((values) => round(median(values)!));
  if (times) options.log(`sandbox: https GET through the proxy ${medians[MASKED]} ms masked, ${medians[PLAIN]} ms plain CONNECT`);
  return [
    { metric: 'https GET through the proxy, a new tunnel each: wall time, median', unit: 'ms', values: medians },
    {
      metric: 'https GET through the proxy, a new tunnel each: wall time, p10',
      unit: 'ms',
      values: of((values) => percentile(values, 0.1)),
    },
    {
      metric: 'https GET through the proxy, a new tunnel each: wall time, p90',
      unit: 'ms',
      values: of((values) => percentile(values, 0.9)),
    },
    {
      metric: "masking's cost per request (difference of medians)",
      unit: 'ms',
      values: { [`${MASKED} - ${PLAIN}`]: times ? round(medians[MASKED]! - medians[PLAIN]!) : null },
    },
  ];
};

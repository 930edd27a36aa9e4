import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

import type { BenchRow, BenchSection } from '../BenchReport.js';
import { benchBrainCli } from './brainCli.js';
import { benchCheckpoint } from './checkpoint.js';
import { benchFleet } from './fleet.js';
import { benchLoop } from './loop.js';
import { benchMcp } from './mcp.js';
import { benchOneTurn } from './oneTurn.js';
import { benchSandbox } from './sandbox.js';
import { benchTools } from './tools.js';

const smoke = { smoke: true, log: () => {} };

const rgInstalled = (() => {
  try {
    execFileSync('rg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** .what = the row with this metric, failing with the metrics there are when it is absent */
const rowOf = (section: BenchSection, metric: string | RegExp): BenchRow => {
  const row = section.rows.find((candidate) => (typeof metric === 'string' ? candidate.metric === metric : metric.test(candidate.metric)));
  if (!row) throw new Error(`no row ${metric} in ${section.rows.map((candidate) => candidate.metric).join(', ')}`);
  return row;
};

/** .what = a row as the report prints it: a unit, values that are numbers or null, ratios likewise */
const expectWellFormed = (row: BenchRow) => {
  expect(row.unit).toMatch(/\S/);
  for (const value of [...Object.values(row.values), ...Object.values(row.ratios ?? {})])
    expect(value === null || Number.isFinite(value)).toBe(true);
};

/** .what = a target with its text and a verdict that is a boolean, or null only when allowed */
const expectTarget = (row: BenchRow, text: string, verdictKnown: boolean) => {
  expect(row.target?.text).toBe(text);
  if (verdictKnown) expect(typeof row.target?.met).toBe('boolean');
  else expect(row.target?.met).toBeNull();
};

describe('bench sections, smoke run', () => {
  it('given node_modules, when the tools section runs, then grep and glob rows carry numbers for bhrain, and the grep and glob targets', async () => {
    const section = await benchTools(smoke);
    expect(section.title).toMatch(/\S/);
    const grep = rowOf(section, 'grep: wall time');
    expectWellFormed(grep);
    expect(grep.values['bhrain (built-in)']).toBeGreaterThan(0);
    if (rgInstalled) {
      expect(grep.values['bhrain (rg engine)']).toBeGreaterThan(0);
      expect(grep.values.rg).toBeGreaterThan(0);
      expect(typeof grep.ratios?.['bhrain(rg)/rg']).toBe('number');
    } else {
      expect(grep.values.rg).toBeNull();
      expect(section.notes.join('\n')).toContain('rg is not installed');
    }
    expectTarget(grep, 'grep within 1.5x of rg when rg is used', rgInstalled);
    const glob = rowOf(section, 'glob: wall time');
    expectWellFormed(glob);
    expect(glob.values['bhrain (built-in)']).toBeGreaterThan(0);
    expect(section.notes.join('\n')).toMatch(/[\d,]+ files/);
    // glob over a generated git tree against rg --files, with its target
    const tree = rowOf(section, /^glob \*\*\/\* over a generated [\d,]+-file git tree/);
    expectWellFormed(tree);
    expect(tree.values['bhrain (built-in)']).toBeGreaterThan(0);
    expectTarget(tree, 'glob within 2x of rg --files', rgInstalled);
    if (rgInstalled) expect(section.notes.join('\n')).toMatch(/bhrain listed ([\d,]+) files.*, rg \1 \(/);
  }, 20_000);

  it("given the generated tree, when the checkpoint section runs, then the first checkpoint and one turn's checkpoint (a file changed, nothing changed) carry times and the turn's target", async () => {
    const section = await benchCheckpoint(smoke);
    for (const metric of [/^first checkpoint/, /^one turn's checkpoint, 1 file changed/, /^one turn's checkpoint, nothing changed/]) {
      const row = rowOf(section, metric);
      expectWellFormed(row);
      expect(row.values.median).toBeGreaterThan(0);
    }
    expectTarget(rowOf(section, /^one turn's checkpoint, 1 file changed/), "one turn's checkpoint within 500 ms on 100,000 files", true);
    expect(section.notes.join('\n')).toMatch(/3 checkpoints recorded/);
  }, 30_000);

  it("given bubblewrap, when the sandbox section runs, then off and workspace-write (in the kept sandbox, a toolbox's first call) carry per-call times and the overhead its target", async () => {
    const section = await benchSandbox(smoke);
    const medians = rowOf(section, 'bash `true`: wall time per call, median');
    expectWellFormed(medians);
    expect(medians.values.off).toBeGreaterThan(0);
    expect(medians.values['workspace-write, in the kept sandbox']).toBeGreaterThan(0);
    expect(medians.values["workspace-write, a toolbox's first call"]).toBeGreaterThan(0);
    const overhead = rowOf(section, 'sandbox overhead per call, in the kept sandbox (difference of medians)');
    expectWellFormed(overhead);
    expectTarget(overhead, '<= 15 ms per call', true);
  }, 20_000);

  it("given the stand-in, when the loop section runs, then overhead, wall (with the CLI's fetch and with the SDK's own) and heap rows carry numbers and their targets", async () => {
    const section = await benchLoop(smoke);
    const overhead = rowOf(section, 'loop overhead per iteration');
    expectWellFormed(overhead);
    expect(overhead.values.claude).toBeGreaterThanOrEqual(0);
    expect(overhead.values.qwen).toBeGreaterThanOrEqual(0);
    expectTarget(overhead, '< 1 ms', true);
    const wall = rowOf(section, 'wall time per iteration (incl. HTTP, SDK, stand-in)');
    expectWellFormed(wall);
    expect(wall.values.claude).toBeGreaterThan(0);
    expect(wall.values.qwen).toBeGreaterThan(0);
    const ownFetch = rowOf(section, "wall time per iteration, the SDK's own fetch (node's global fetch)");
    expectWellFormed(ownFetch);
    expect(ownFetch.values.claude).toBeGreaterThan(0);
    expect(ownFetch.values.qwen).toBeGreaterThan(0);
    const heap = rowOf(section, /^heap growth over/);
    expectWellFormed(heap);
    expect(Number.isFinite(heap.values.bhrain)).toBe(true);
    expectTarget(heap, '< 5 MB', true);
  }, 20_000);

  it('given the built library and the real claude CLI, when the BrainCli boot section runs, then boot, floor, overhead and RSS rows carry numbers and their targets', async () => {
    const section = await benchBrainCli(smoke);
    expect(section.notes.filter((note) => note.startsWith('not measured'))).toEqual([]);
    const boot = rowOf(section, /^boot → ready, dispatch: bhrain/);
    expectWellFormed(boot);
    expect(boot.values.median).toBeGreaterThan(0);
    expect(boot.values.min).toBeLessThanOrEqual(boot.values.median!);
    expect(boot.values.max).toBeGreaterThanOrEqual(boot.values.median!);
    expectTarget(boot, '≤ 250 ms', true);
    const floor = rowOf(section, /^boot → ready, dispatch: floor/);
    expectWellFormed(floor);
    expect(floor.values.median).toBeGreaterThan(0);
    const overhead = rowOf(section, /^bhrain overhead \(boot − floor/);
    expectWellFormed(overhead);
    // one run in smoke: the overhead is that pair's difference (to rounding)
    expect(overhead.values.median).toBeCloseTo(boot.values.median! - floor.values.median!, 0);
    const rss = rowOf(section, /^RSS of the caller after boot/);
    expectWellFormed(rss);
    // a node process that imported the library holds tens of MB; less means the probe measured nothing real
    expect(rss.values.median).toBeGreaterThan(20);
    expectTarget(rss, '< 150 MB', true);
    // the floor replays the args genBrainCli spawned: dispatch over stream-json
    expect(section.notes.join('\n')).toMatch(/-p --output-format stream-json --input-format stream-json/);
  }, 60_000);

  it('given the built library and real MCP servers, when the mcp section runs, then start, floor, concurrency, close and bhrain act rows carry numbers, and the second-server target its verdict', async () => {
    const section = await benchMcp(smoke);
    expect(section.notes.filter((note) => note.startsWith('not measured'))).toEqual([]);
    const one = rowOf(section, /^one stdio server: genMcpToolBox/);
    expectWellFormed(one);
    // a real server is a node process that must load and answer initialize and tools/list: never under a few ms
    expect(one.values.median).toBeGreaterThan(5);
    expect(one.values.min).toBeLessThanOrEqual(one.values.median!);
    expect(one.values.max).toBeGreaterThanOrEqual(one.values.median!);
    const floor = rowOf(section, /^floor: bare SDK Client/);
    expectWellFormed(floor);
    expect(floor.values.median).toBeGreaterThan(5);
    const overhead = rowOf(section, 'bhrain overhead (one − floor, per run)');
    expectWellFormed(overhead);
    expect(overhead.values.median).toBeCloseTo(one.values.median! - floor.values.median!, 0);
    for (const pair of ['everything + filesystem', 'everything × 2']) {
      const two = rowOf(section, `two servers at once (${pair}): wall`);
      expectWellFormed(two);
      expect(two.values.median).toBeGreaterThan(5);
      const adds = rowOf(section, `second server adds (${pair} − one, per run)`);
      expectWellFormed(adds);
      // one run in smoke: what the second adds is that round's difference (to rounding)
      expect(adds.values.median).toBeCloseTo(two.values.median! - one.values.median!, 0);
      expectTarget(adds, "< 0.5 × one server's start", true);
    }
    const cpu = rowOf(section, /^CPU \(user \+ sys\) of that server process/);
    expectWellFormed(cpu);
    // read from /proc/<pid>/stat of the box's pid: zero would mean the pid is not the server
    expect(cpu.values.median).toBeGreaterThan(0);
    const close = rowOf(section, /^close\(\): one stdio server/);
    expectWellFormed(close);
    expect(close.values.median).toBeGreaterThanOrEqual(0);
    // the user's view: bhrain act with 0, 1 and 2 servers from --mcp-config, and what each server adds
    for (const count of [0, 1, 2]) {
      const wall = rowOf(section, `bhrain act --input hi, ${count} server(s) via --mcp-config: wall`);
      expectWellFormed(wall);
      expect(wall.values.median).toBeGreaterThan(0);
    }
    // one run each in smoke, so these differences are noise-bound: their presence and shape are what is checked here
    expectWellFormed(rowOf(section, 'bhrain act: the first server adds (1 server − 0, per run)'));
    expectWellFormed(rowOf(section, 'bhrain act: the second server adds (2 servers − 1, per run)'));
  }, 90_000);

  it('given the stand-in, bhrain and Claude Code, when the one-turn section runs alternating, then the one-turn, slope, 20-step wall and RSS rows carry median and min–max, ratios, and targets with verdicts', async () => {
    const section = await benchOneTurn(smoke);
    expect(section.notes.filter((note) => note.startsWith('not measured') || /: not measured:/.test(note))).toEqual([]);
    // one round in smoke: median, min and max are that one run
    const expectSpread = (row: BenchRow) => {
      expectWellFormed(row);
      expect(row.values.median).toBeGreaterThan(0);
      expect(row.values.min).toBeLessThanOrEqual(row.values.median!);
      expect(row.values.max).toBeGreaterThanOrEqual(row.values.median!);
    };
    const pairs: [RegExp, string | undefined][] = [
      [/^one-turn answer .*spawn → exit/, '≤ 0.35x Claude Code'],
      [/^wall time, 2-step bash task/, undefined],
      [/^wall time, 42-step bash task/, undefined],
      [/^wall time, 20-step bash task/, '≤ 0.33x Claude Code'],
      [/^peak RSS of the process tree, 20-step bash task/, '≤ 0.4x Claude Code'],
    ];
    for (const [metric, target] of pairs) {
      const bhrain = rowOf(section, new RegExp(`${metric.source}.*: bhrain$`));
      const claude = rowOf(section, new RegExp(`${metric.source}.*: Claude Code$`));
      expectSpread(bhrain);
      expectSpread(claude);
      expect(bhrain.ratios?.['bhrain/claude code']).toBeCloseTo(bhrain.values.median! / claude.values.median!, 1);
      if (target) expectTarget(bhrain, target, true);
    }
    // the 42-step run does 40 more tool calls than the 2-step run: its wall is longer, so the slope is a positive time
    const slope = rowOf(section, /^per-iteration slope .*: bhrain$/);
    expectWellFormed(slope);
    expect(slope.values.median).toBeGreaterThan(0);
    expect(slope.values.median).toBeCloseTo(
      (rowOf(section, /^wall time, 42-step.*: bhrain$/).values.median! - rowOf(section, /^wall time, 2-step.*: bhrain$/).values.median!) /
        40,
      0,
    );
    expectTarget(slope, '≤ 8 ms per iteration', true);
    expect(typeof slope.ratios?.['bhrain/claude code']).toBe('number');
    const claudeSlope = rowOf(section, /^per-iteration slope .*: Claude Code$/);
    expectWellFormed(claudeSlope);
    expect(claudeSlope.values.median).toBeGreaterThan(0);
    // the stand-in serves 40 more requests in the 42-step run: its CPU per iteration is a positive part of each slope
    for (const subject of ['bhrain', 'Claude Code']) {
      const standinCpu = rowOf(section, new RegExp(`^the stand-in's CPU per iteration, .*: ${subject}$`));
      expectWellFormed(standinCpu);
      expect(standinCpu.values.median).toBeGreaterThan(0);
    }
  }, 120_000);

  it('given s3rver and an OTLP receiver on loopback, when the fleet section runs, then plain, store, telemetry, both and the two continues carry walls, and each cost is its difference of medians', async () => {
    const section = await benchFleet(smoke);
    // a run that failed, did not export, or left its series elsewhere than its store is "not measured": none may be
    expect(section.notes.filter((note) => note.startsWith('not measured'))).toEqual([]);
    const wallOf = (label: RegExp) => {
      const row = rowOf(section, label);
      expectWellFormed(row);
      // a bhrain process that loads its bundle and answers over HTTP: never under a few ms
      expect(row.values.median).toBeGreaterThan(5);
      // one round in smoke: median, min and max are that one run
      expect(row.values.min).toBe(row.values.median);
      expect(row.values.max).toBe(row.values.median);
      return row;
    };
    const plain = wallOf(/^one-turn `act --input hi`, spawn → exit: plain/);
    expect(plain.values['cost (difference of medians)']).toBeUndefined();
    for (const label of [/: S3 store \(/, /: telemetry on \(/, /: S3 store and telemetry$/]) {
      const row = wallOf(new RegExp(`^one-turn \`act --input hi\`, spawn → exit${label.source}`));
      expect(row.values['cost (difference of medians)']).toBeCloseTo(row.values.median! - plain.values.median!, 0);
    }
    const local = wallOf(/--on-series <hash>`, continuing a one-turn series: local ref store$/);
    const store = wallOf(/--on-series <hash>`, continuing a one-turn series: S3 store$/);
    expect(store.values['cost (difference of medians)']).toBeCloseTo(store.values.median! - local.values.median!, 0);
    expect(section.notes.join('\n')).toMatch(/127\.0\.0\.1 .*zero network latency/);
  }, 60_000);
});

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, describe, expect, it } from 'vitest';

import { CaptureBudget } from './CaptureBudget.js';
import { signalGroup } from './signalGroup.js';
import { spawnGroup, type SpawnGroupInput } from './spawnGroup.js';

// one spawnGroup for every child process; these prove it with real processes, no mocks

/** pids a test started outside any group it ends, killed after the suite whatever happened */
const strays: number[] = [];
afterAll(() => {
  for (const pid of strays) signalGroup(pid, 'SIGKILL');
});

/** .what = bash -c <script> in a group of its own, stdout and stderr captured (64 KB each) */
const bash = (script: string, options: Partial<SpawnGroupInput> = {}) =>
  spawnGroup({
    command: 'bash',
    args: ['-c', script],
    cwd: process.cwd(),
    env: process.env,
    capture: { stdout: { maxBytes: 64 * 1024 }, stderr: { maxBytes: 64 * 1024 } },
    killGraceMs: 2_000,
    ...options,
  });

/** .what = whether a process with this pid is alive (a zombie counts as gone) */
const isAlive = (pid: number): boolean => {
  try {
    const stat = execFileSync('cat', [`/proc/${pid}/stat`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** .what = waits until the pid is gone, up to withinMs; whether it went */
const goneWithin = async (pid: number, withinMs: number): Promise<boolean> => {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(20);
  }
  return !isAlive(pid);
};

describe('spawnGroup: how a child ended', () => {
  it('given a command that exits, then the end has its code and both streams, in a group of its own', async () => {
    const group = bash('echo out; echo err >&2; ps -o pgid= -p $$; exit 3');
    const end = await group.ended;
    expect(end).toMatchObject({ exitCode: 3, exitSignal: null, timedOut: false, aborted: false });
    expect(end.spawnError).toBeUndefined();
    const [out, pgid] = end.stdout.head.trim().split('\n');
    expect(out).toBe('out');
    // the leader's pid is its group's id
    expect(Number(pgid)).toBe(group.pid);
    expect(end.stderr.head).toBe('err\n');
    expect(group.exit).toEqual({ code: 3, signal: null });
    expect(await group.exited).toEqual({ code: 3, signal: null });
  });

  it('given a command killed by a signal of its own, then the end names the signal', async () => {
    const end = await bash('kill -USR1 $$').ended;
    expect(end).toMatchObject({ exitCode: null, exitSignal: 'SIGUSR1', timedOut: false, aborted: false });
  });

  it('given a command that cannot be started, then the end says why, with no pid and nothing to signal', async () => {
    const group = spawnGroup({ command: 'bhrain-no-such-command', args: [], cwd: process.cwd(), env: process.env, killGraceMs: 10 });
    expect(group.pid).toBeNull();
    const end = await group.ended;
    expect(end.spawnError).toMatch(/ENOENT/);
    expect(end).toMatchObject({ exitCode: null, exitSignal: null, timedOut: false, aborted: false });
    expect(await group.exited).toEqual({ code: null, signal: null });
    expect(group.exit).toBeNull();
    // stop on a child that never ran resolves with the same end
    expect(await group.stop()).toBe(end);
  });
});

describe('spawnGroup: timeout, abort, and TERM then KILL', () => {
  it('given a command past its timeout, then it is stopped and the end says timedOut, with no exit code', async () => {
    const started = Date.now();
    const end = await bash('sleep 10', { timeoutMs: 200 }).ended;
    expect(end).toMatchObject({ exitCode: null, exitSignal: null, timedOut: true, aborted: false });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('given an abort while it runs, then it is stopped and the end says aborted', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 150);
    const started = Date.now();
    const end = await bash('sleep 10', { signal: abort.signal }).ended;
    expect(end).toMatchObject({ exitCode: null, timedOut: false, aborted: true });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('given a signal aborted already, then the child is stopped at once', async () => {
    const abort = new AbortController();
    abort.abort();
    const end = await bash('sleep 10', { signal: abort.signal }).ended;
    expect(end).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
  });

  it('given a child that ignores SIGTERM, then SIGKILL ends it once the grace has passed, and not before', async () => {
    // an ignored signal stays ignored across exec: the sleeps ignore it too
    const group = bash('trap "" TERM; echo ready; while :; do sleep 0.05; done', { timeoutMs: 100, killGraceMs: 700 });
    const started = Date.now();
    const end = await group.ended;
    const elapsedMs = Date.now() - started;
    expect(end).toMatchObject({ timedOut: true, exitCode: null });
    expect(end.stdout.head).toBe('ready\n');
    expect(elapsedMs).toBeGreaterThanOrEqual(100 + 700 - 50);
    expect(elapsedMs).toBeLessThan(100 + 700 + 1_500);
    expect(isAlive(group.pid!)).toBe(false);
  });

  it('given a grace of 0, then the timeout SIGKILLs at once, even a child that ignores SIGTERM', async () => {
    const started = Date.now();
    const end = await bash('trap "" TERM; sleep 10', { timeoutMs: 100, killGraceMs: 0 }).ended;
    expect(end.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('given stop() from the caller, then the group gets SIGTERM and the end reports it as the exit signal', async () => {
    const group = bash('echo started; sleep 10');
    await new Promise((resolve) => group.child.stdout!.once('data', resolve));
    const end = await group.stop();
    expect(end).toMatchObject({ exitSignal: 'SIGTERM', exitCode: null, timedOut: false, aborted: false });
  });
});

describe('spawnGroup: nothing left behind', () => {
  it('given a grandchild in the background, then it is killed with the group when the leader exits', async () => {
    // the grandchild keeps nothing of ours open: only the group kill can end it
    const end = await bash('sleep 1000 >/dev/null 2>&1 & echo $!').ended;
    const grandchild = Number(end.stdout.head.trim());
    strays.push(grandchild);
    expect(end.exitCode).toBe(0);
    expect(await goneWithin(grandchild, 1_000)).toBe(true);
  });

  it('given a grandchild that holds the pipes, then the end still comes when the leader exits, and it is killed', async () => {
    const started = Date.now();
    const end = await bash('sleep 1000 & echo $!').ended;
    const grandchild = Number(end.stdout.head.trim());
    strays.push(grandchild);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await goneWithin(grandchild, 1_000)).toBe(true);
  });

  it('given a grandchild stopped with its group by the timeout, then it is gone too', async () => {
    const group = bash('sleep 1000 >/dev/null 2>&1 & echo $!; wait', { timeoutMs: 300 });
    const end = await group.ended;
    const grandchild = Number(end.stdout.head.trim());
    strays.push(grandchild);
    expect(end.timedOut).toBe(true);
    expect(await goneWithin(grandchild, 1_000)).toBe(true);
  });

  it('given a process that left the group and holds the pipes, then the end comes after closeGraceMs, and onExit could find it', async () => {
    const exits: unknown[] = [];
    const started = Date.now();
    // the leader waits until the sleep has left (setsid done), or the group kill at its exit would still reach it
    const script = 'setsid sleep 1000 & until [ "$(ps -o sid= -p $! | tr -d " ")" = "$!" ]; do sleep 0.01; done; echo $!';
    const group = bash(script, { closeGraceMs: 300, onExit: (exit) => exits.push(exit) });
    const exitedAt = await group.exited.then(() => Date.now());
    const end = await group.ended;
    const escaped = Number(end.stdout.head.trim());
    strays.push(escaped);
    expect(exits).toEqual([{ code: 0, signal: null }]);
    expect(end.exitCode).toBe(0);
    expect(Date.now() - exitedAt).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(3_000);
    // outside the group: spawnGroup cannot see it (runBashCommand's tag sweep is what finds such a one)
    expect(isAlive(escaped)).toBe(true);
  });

  it("given bhrain exits while a group runs, then the group is SIGKILLed by bhrain's exit", async () => {
    // the built module (npm test builds first): node runs no .ts of ours
    const module = fileURLToPath(new URL('../../dist/process/spawnGroup.js', import.meta.url));
    const script = `const { spawnGroup } = await import(${JSON.stringify(module)});
      const group = spawnGroup({ command: 'bash', args: ['-c', 'sleep 1000 >/dev/null 2>&1 & echo $!; wait'], cwd: '/', env: process.env, capture: { stdout: { maxBytes: 100 } }, killGraceMs: 1000 });
      group.child.stdout.once('data', (chunk) => { process.stdout.write(group.pid + ' ' + chunk); process.exit(0); });`;
    const [leader, grandchild] = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
      .trim()
      .split(' ')
      .map(Number);
    strays.push(leader, grandchild);
    expect(await goneWithin(leader, 1_000)).toBe(true);
    expect(await goneWithin(grandchild, 1_000)).toBe(true);
  });
});

describe('spawnGroup: bounded output', () => {
  it('given a flood of output, then the capture keeps its head and tail within maxBytes and counts the rest', async () => {
    const end = await bash('printf "start"; head -c 5000000 /dev/zero | tr "\\0" a; printf "end"', {
      capture: { stdout: { maxBytes: 1_000 } },
    }).ended;
    expect(end.stdout.totalBytes).toBe(5_000_000 + 8);
    expect(end.stdout.droppedBytes).toBe(5_000_000 + 8 - 1_000);
    expect(end.stdout.head.startsWith('start')).toBe(true);
    expect(end.stdout.tail.endsWith('end')).toBe(true);
    expect(end.stdout.head.length + end.stdout.tail.length).toBe(1_000);
  });

  it('given a tail-only capture, then it keeps the last bytes only', async () => {
    const end = await bash('for i in $(seq 1 2000); do echo "line $i" >&2; done', { capture: { stderr: { maxBytes: 100, keep: 'tail' } } })
      .ended;
    expect(end.stderr.head).toBe('');
    expect(end.stderr.tail.endsWith('line 2000\n')).toBe(true);
    expect(Buffer.byteLength(end.stderr.tail)).toBe(100);
  });

  it('given a shared budget, then what the captures took is given back at the end', async () => {
    const budget = new CaptureBudget(10 * 1024 * 1024);
    const capture = { maxBytes: 4 * 1024 * 1024, budget };
    const group = bash('head -c 3000000 /dev/zero', { capture: { stdout: capture, stderr: capture } });
    const end = await group.ended;
    expect(end.stdout.totalBytes).toBe(3_000_000);
    expect(budget.takenBytes).toBe(0);
  });

  it('given a stream the caller reads itself, then spawnGroup leaves it alone and captured() reads the others as they are', async () => {
    const group = bash('echo to-caller; echo to-capture >&2; sleep 0.2', { capture: { stderr: { maxBytes: 100 } } });
    let read = '';
    group.child.stdout!.on('data', (chunk: Buffer) => (read += chunk.toString()));
    await sleep(100);
    expect(group.captured().stderr.head).toBe('to-capture\n');
    const end = await group.ended;
    expect(read).toBe('to-caller\n');
    expect(end.stdout.totalBytes).toBe(0);
  });
});

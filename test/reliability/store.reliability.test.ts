// store integrity: the refs store under SIGKILL mid-write, 20 concurrent CLI runs, a full disk, and a corrupt file
import { execFileSync, spawn } from 'node:child_process';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { genBrainRefStore } from '../../src/core/continuation/genBrainRefStore.js';
import { PACKAGE_ROOT, genCliEnv, runBhrain, runProcess, type CliRun } from '../acceptance/runCli.js';
import { useStandin } from '#standin/useStandin.js';
import { reliabilityCase } from './reliabilityCase.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();

const envFor = (home: string) => genCliEnv({ standin: standin(), home });

/** the text of the last user message of a request: the task the stand-in answers */
const taskOf = (body: { messages?: Array<{ role: string; content: unknown }> }): string => {
  const last = [...(body.messages ?? [])].reverse().find((message) => message.role === 'user');
  const content = last?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((block: { text?: string }) => block.text ?? '').join('') : '';
};

/** a stand-in model that answers every task with "answer to <task>" */
const answerEveryTask = () => {
  standin().respond = (request) => ({ text: `answer to ${taskOf(request.body)}` });
};

/** `bhrain act` with a task, json output; the refs it printed */
const act = async (input: {
  cwd: string;
  home: string;
  task: string;
  extra?: string[];
}): Promise<CliRun & { series?: string; episode?: string }> => {
  const run = await runBhrain({
    args: ['act', '--atom', 'claude/haiku', '--quiet', '--output', 'json', '--input', input.task, ...(input.extra ?? [])],
    cwd: input.cwd,
    env: envFor(input.home),
  });
  if (run.code !== 0 || !run.stdout) return run;
  const json = JSON.parse(run.stdout);
  return { ...run, series: json.series.hash, episode: json.episode.hash };
};

/** every file name in the store's folders */
const storeFiles = async (home: string) => ({
  episodes: await readdir(join(home, 'refs', 'episodes')).catch(() => [] as string[]),
  series: await readdir(join(home, 'refs', 'series')).catch(() => [] as string[]),
});

describe('the refs store survives SIGKILL during a write', () => {
  // a child that saves big episodes and series in a loop through the built package, printing each one saved
  const childScript = (from: number, to: number) => `
import { genBrainRefStore } from ${JSON.stringify(pathToFileURL(join(PACKAGE_ROOT, 'dist', 'core', 'continuation', 'genBrainRefStore.js')).href)};
import { genBrainEpisode } from ${JSON.stringify(pathToFileURL(join(PACKAGE_ROOT, 'dist', 'core', 'contract', 'BrainEpisode.js')).href)};
import { genBrainExchange } from ${JSON.stringify(pathToFileURL(join(PACKAGE_ROOT, 'dist', 'core', 'contract', 'BrainExchange.js')).href)};
import { genBrainSeries } from ${JSON.stringify(pathToFileURL(join(PACKAGE_ROOT, 'dist', 'core', 'contract', 'BrainSeries.js')).href)};
const store = genBrainRefStore({ home: process.env.BHRAIN_HOME });
const filler = 'x'.repeat(256 * 1024);
process.stdout.write('ready\\n');
for (let index = ${from}; index < ${to}; index++) {
  const episode = genBrainEpisode({ exchanges: [genBrainExchange({ input: 'task ' + index, output: 'answer ' + index + ' ' + filler })] });
  await store.saveEpisode(episode);
  await store.saveSeries(genBrainSeries({ episodes: [episode] }));
  process.stdout.write('saved ' + index + '\\n');
}
`;

  reliabilityCase(
    'kill -9 at random moments, 6+ times until one lands inside a write: every ref on disk verifies, no temp file is served, and a retry saves them all',
    async () => {
      const home = tempDir('bhrain-rel-store-kill-');
      const scriptDir = tempDir('bhrain-rel-store-kill-script-');
      // each round saves 60 items from a start 10 further on: the overlap retries saves a kill cut, the rest are new writes
      const roundItems = 60;
      let total = 0;
      const kills: Array<{ afterMs: number; saved: number }> = [];
      const tempsLeft = async () =>
        Object.values(await storeFiles(home))
          .flat()
          .filter((name) => name.endsWith('.tmp')).length;
      // at least 6 kills, and more until one is seen to land inside a write (it leaves its temp file behind)
      for (let round = 0; round < 6 || (round < 20 && !(await tempsLeft())); round++) {
        const from = round * 10;
        total = Math.max(total, from + roundItems);
        const script = join(scriptDir, `save-${round}.mjs`);
        await writeFile(script, childScript(from, from + roundItems));
        const child = spawn(process.execPath, [script], { env: { ...process.env, BHRAIN_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        const afterMs = 20 + Math.floor(Math.random() * 250);
        await new Promise<void>((resolve, reject) => {
          child.on('error', reject);
          child.stdout.on('data', (chunk) => {
            out += chunk;
            if (out.startsWith('ready\n') && !child.killed) {
              out = out.replace('ready\n', 'started\n');
              setTimeout(() => child.kill('SIGKILL'), afterMs);
            }
          });
          child.on('close', () => resolve());
        });
        kills.push({ afterMs, saved: out.split('\n').filter((line) => line.startsWith('saved ')).length });
      }
      // the kills landed mid-run, and at least one inside a write
      expect(kills.some((kill) => kill.saved < roundItems)).toBe(true);
      expect(await tempsLeft()).toBeGreaterThan(0);

      const store = genBrainRefStore({ home });
      const check = async () => {
        const { episodes, series } = await storeFiles(home);
        const temps = [...episodes, ...series].filter((name) => name.endsWith('.tmp'));
        for (const name of episodes.filter((entry) => entry.endsWith('.json'))) {
          const episode = await store.getEpisode(name.slice(0, -'.json'.length));
          expect(episode.exchanges[0].output).toMatch(/^answer \d+ x{262144}$/);
        }
        for (const name of series.filter((entry) => entry.endsWith('.json'))) {
          const found = await store.getSeries(name.slice(0, -'.json'.length));
          expect(found.episodes).toHaveLength(1);
        }
        // a temp file left by a kill is never what a ref resolves to: its ref is either the finished file or not found
        for (const name of temps) {
          const hash = name.split('.')[1];
          const kind = episodes.includes(name) ? 'episode' : 'series';
          const finished = (kind === 'episode' ? episodes : series).includes(`${hash}.json`);
          const read = kind === 'episode' ? store.getEpisode(hash) : store.getSeries(hash);
          if (finished) await expect(read).resolves.toMatchObject({ hash });
          else await expect(read).rejects.toThrow(/not found: no (episode|series) /);
        }
        return {
          episodes: episodes.filter((entry) => entry.endsWith('.json')).length,
          series: series.filter((entry) => entry.endsWith('.json')).length,
        };
      };
      await check();

      // the retry: the same saves, uninterrupted, all succeed and all read back
      const script = join(scriptDir, 'save-all.mjs');
      await writeFile(script, childScript(0, total));
      const retry = await runProcess({
        command: process.execPath,
        args: [script],
        cwd: scriptDir,
        env: { ...process.env, BHRAIN_HOME: home },
      });
      expect(retry.stderr).toBe('');
      expect(retry.code).toBe(0);
      expect(await check()).toEqual({ episodes: total, series: total });
      // the store holds tens of MB: not left behind in the temp dir
      await rm(home, { recursive: true, force: true });
    },
    90_000,
  );
});

describe('20 concurrent CLI runs share one store', () => {
  reliabilityCase(
    '20 `bhrain act` processes at once, each with its own task: all exit 0, and all 20 series are readable and right',
    async () => {
      const home = tempDir('bhrain-rel-store-concurrent-');
      const cwd = tempDir('bhrain-rel-store-concurrent-cwd-');
      answerEveryTask();
      const tasks = Array.from({ length: 20 }, (_, index) => `concurrent task ${index}`);
      const runs = await Promise.all(tasks.map((task) => act({ cwd, home, task })));
      expect(runs.map((run) => ({ code: run.code, stderr: run.stderr }))).toEqual(tasks.map(() => ({ code: 0, stderr: '' })));
      const store = genBrainRefStore({ home });
      for (const [index, run] of runs.entries()) {
        const series = await store.getSeries(run.series!);
        expect(series.episodes[0].exchanges.map((exchange) => [exchange.input, exchange.output])).toEqual([
          [tasks[index], `answer to ${tasks[index]}`],
        ]);
        expect((await store.getEpisode(run.episode!)).hash).toBe(run.episode);
      }
      expect(new Set(runs.map((run) => run.series)).size).toBe(20);
      const { episodes, series } = await storeFiles(home);
      expect([...episodes, ...series].filter((name) => !name.endsWith('.json'))).toEqual([]);
      // 20 run records in one home, none overwritten, and nothing in the working directory
      expect(await readdir(join(home, 'runs'))).toHaveLength(20);
      expect(await readdir(cwd)).toEqual([]);

      // and 10 more at once, all continuing the same series: 10 new series, each with both exchanges
      const continued = await Promise.all(
        Array.from({ length: 10 }, (_, index) => act({ cwd, home, task: `follow-up ${index}`, extra: ['--on-series', runs[0].series!] })),
      );
      expect(continued.map((run) => run.code)).toEqual(continued.map(() => 0));
      for (const [index, run] of continued.entries()) {
        const series = await store.getSeries(run.series!);
        expect(series.episodes[0].exchanges.map((exchange) => exchange.input)).toEqual([tasks[0], `follow-up ${index}`]);
      }
    },
    120_000,
  );
});

/** a small disk holding BHRAIN_HOME: where the test reads the store, how to run the CLI against it, and how to let it go */
interface SmallDisk {
  how: string;
  /** the store as the test process sees it */
  storeHome: string;
  act: (input: { cwd: string; task: string; extra?: string[] }) => ReturnType<typeof act>;
  release: () => Promise<void>;
}

const DISK_SIZE = '1m';

/** a tmpfs mounted on a temp dir as root: the CLI and the test see the same path */
const mountPlain = async (): Promise<SmallDisk> => {
  const home = tempDir('bhrain-rel-store-full-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_SIZE}`, 'tmpfs', home], { stdio: 'pipe' });
  return {
    how: 'mount -t tmpfs',
    storeHome: home,
    act: (input) => act({ ...input, home }),
    release: async () => {
      execFileSync('umount', ['-l', home]);
      await rm(home, { recursive: true, force: true });
    },
  };
};

/**
 * a tmpfs in a private mount namespace (unshare --user --map-root-user --mount), held open by a sleeping process:
 * the CLI runs inside it through nsenter, and the test reads the store through /proc/<pid>/root
 */
const mountInNamespace = async (): Promise<SmallDisk> => {
  const home = tempDir('bhrain-rel-store-full-ns-');
  const holder = spawn(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--mount',
      'sh',
      '-c',
      `mount -t tmpfs -o size=${DISK_SIZE} tmpfs "$0" && echo mounted && exec sleep 600`,
      home,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let said = '';
  await new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', (chunk) => (said += chunk) && said.includes('mounted') && resolve());
    holder.stderr.on('data', (chunk) => (said += chunk));
    holder.on('exit', () => reject(new Error(`unshare could not mount a tmpfs: ${said.trim()}`)));
  });
  const pid = holder.pid!;
  return {
    how: 'unshare --user --map-root-user --mount',
    storeHome: `/proc/${pid}/root${home}`,
    act: async (input) => {
      const run = await runProcess({
        command: 'nsenter',
        args: [
          '-t',
          String(pid),
          '-U',
          '-m',
          '--preserve-credentials',
          process.execPath,
          join(PACKAGE_ROOT, 'bin', 'bhrain'),
          'act',
          '--atom',
          'claude/haiku',
          '--quiet',
          '--output',
          'json',
          '--input',
          input.task,
          ...(input.extra ?? []),
        ],
        cwd: input.cwd,
        env: envFor(home),
      });
      if (run.code !== 0 || !run.stdout) return run;
      const json = JSON.parse(run.stdout);
      return { ...run, series: json.series.hash, episode: json.episode.hash };
    },
    release: async () => {
      holder.kill('SIGKILL');
    },
  };
};

/** why no small disk can be made here, or null; a plain mount is preferred, the namespace is the fallback */
const smallDiskProblem = await (async (): Promise<{ problem: string | null; make: () => Promise<SmallDisk> }> => {
  const problems: string[] = [];
  // BHRAIN_RELIABILITY_FORCE_UNSHARE=1 exercises the fallback where a plain mount would work
  const makers = [...(process.env.BHRAIN_RELIABILITY_FORCE_UNSHARE ? [] : [mountPlain]), mountInNamespace];
  for (const make of makers) {
    try {
      const disk = await make();
      await disk.release();
      return { problem: null, make };
    } catch (error) {
      problems.push(String((error as { stderr?: Buffer }).stderr ?? (error as Error).message ?? error).trim());
    }
  }
  return {
    problem: `cannot make a small disk: mount -t tmpfs and unshare --user --map-root-user --mount both failed (${problems.join('; ')})`,
    make: mountPlain,
  };
})();

describe('a full disk', () => {
  const declare = smallDiskProblem.problem
    ? (name: string, run: () => Promise<void>, timeoutMs?: number) =>
        it.skip(`${name} (skipped: ${smallDiskProblem.problem})`, run, timeoutMs)
    : reliabilityCase;

  declare(
    'a store on a full disk: the CLI exits 5 saying the disk is full, leaves no partial file, earlier refs stay intact, and a retry after freeing space succeeds',
    async () => {
      const cwd = tempDir('bhrain-rel-store-full-cwd-');
      answerEveryTask();
      const disk = await smallDiskProblem.make();
      try {
        const earlier = await disk.act({ cwd, task: 'before the disk filled up' });
        expect(earlier.stderr).toBe('');
        expect(earlier.code).toBe(0);

        // fill every free byte
        const filler = join(disk.storeHome, 'filler');
        for (const size of [64 * 1024, 4096, 512, 64, 1])
          while (
            await writeFile(filler, Buffer.alloc(size, 1), { flag: 'a' }).then(
              () => true,
              () => false,
            )
          );

        const full = await disk.act({ cwd, task: 'after the disk filled up' });
        expect(full.code).toBe(5);
        // the answer is delivered all the same, and the failure said once in the JSON and once on stderr
        const fullJson = JSON.parse(full.stdout);
        expect(fullJson).toMatchObject({ output: 'answer to after the disk filled up', exitCode: 5, error: { code: 'PERSIST' } });
        expect(fullJson.error.message).toMatch(
          /could not save the (episode|series|compacted) [0-9a-f]{64} to the ref store at .+ \(ENOSPC\): the disk is full; free space and run again\. Earlier refs are intact/,
        );
        expect(full.stderr).toMatch(
          /^error: the refs could not be saved: could not save the .+ the disk is full; .+\(the answer above is complete\)$/m,
        );
        // a continuation of the earlier series on the full disk fails the same way, and does not touch it
        const continued = await disk.act({ cwd, task: 'continue on a full disk', extra: ['--on-series', earlier.series!] });
        expect(continued.code).toBe(5);
        expect(continued.stderr).toMatch(/the disk is full/);

        const store = genBrainRefStore({ home: disk.storeHome });
        expect((await store.getSeries(earlier.series!)).episodes[0].exchanges[0].input).toBe('before the disk filled up');
        expect((await store.getEpisode(earlier.episode!)).hash).toBe(earlier.episode);
        const { episodes, series } = await storeFiles(disk.storeHome);
        // before the fix a temp file cut short by ENOSPC stayed behind, holding space the user must free
        expect([...episodes, ...series].sort()).toEqual([`${earlier.episode}.json`, `${earlier.series}.json`].sort());

        // free the space: the same runs now succeed
        await rm(filler);
        const retried = await disk.act({ cwd, task: 'after the disk filled up' });
        expect(retried.code).toBe(0);
        expect((await store.getSeries(retried.series!)).episodes[0].exchanges[0].output).toBe('answer to after the disk filled up');
        const resumed = await disk.act({ cwd, task: 'continue after freeing', extra: ['--on-series', earlier.series!] });
        expect(resumed.code).toBe(0);
      } finally {
        await disk.release();
      }
    },
    120_000,
  );
});

describe('a corrupt file in the store', () => {
  reliabilityCase(
    'one byte changed in a stored series or episode is detected by its hash, reported (exit 2), never served, and a run that saves the same ref repairs it',
    async () => {
      const home = tempDir('bhrain-rel-store-corrupt-');
      const cwd = tempDir('bhrain-rel-store-corrupt-cwd-');
      answerEveryTask();
      const original = await act({ cwd, home, task: 'a task worth keeping' });
      expect(original.code).toBe(0);
      const seriesPath = join(home, 'refs', 'series', `${original.series}.json`);
      const episodePath = join(home, 'refs', 'episodes', `${original.episode}.json`);
      const intact = await readFile(seriesPath, 'utf8');

      // one byte: "worth" becomes "wOrth", the JSON still parses and the size is the same
      const oneByte = intact.replace('a task worth keeping', 'a task wOrth keeping');
      expect(oneByte.length).toBe(intact.length);
      await writeFile(seriesPath, oneByte);
      await writeFile(episodePath, (await readFile(episodePath, 'utf8')).replace('answer to a task', 'answer to a tasK'));

      const store = genBrainRefStore({ home });
      await expect(store.getSeries(original.series!)).rejects.toThrow(
        /is corrupt and will not be used \(corrupt exchange: its content hashes to [0-9a-f]{64} but it claims/,
      );
      await expect(store.getEpisode(original.episode!)).rejects.toThrow(/is corrupt and will not be used/);

      const requestsBefore = standin().requests.length;
      const onSeries = await act({ cwd, home, task: 'continue', extra: ['--on-series', original.series!.slice(0, 12)] });
      expect(onSeries.code).toBe(2);
      expect(JSON.parse(onSeries.stdout)).toMatchObject({
        termination: 'usage',
        exitCode: 2,
        output: null,
        error: { code: 'BAD_REQUEST' },
      });
      expect(onSeries.stderr).toMatch(
        new RegExp(
          `^bhrain act: the series ${original.series!.slice(0, 12)} in the ref store is corrupt and will not be used \\(corrupt exchange: its content hashes to [0-9a-f]{64} but it claims [0-9a-f]{64}; the ref was altered or damaged\\); start a new series\\n$`,
        ),
      );
      const onEpisode = await act({ cwd, home, task: 'branch', extra: ['--on-episode', original.episode!] });
      expect(onEpisode.code).toBe(2);
      expect(onEpisode.stderr).toMatch(/the episode [0-9a-f]{64} in the ref store is corrupt and will not be used/);
      // never served: the model was not called with the damaged conversation, nor at all
      expect(standin().requests.length).toBe(requestsBefore);

      // damage that breaks the JSON, and a file emptied to 0 bytes, are reported the same way
      for (const damaged of [intact.slice(0, intact.length / 2), '']) {
        await writeFile(seriesPath, damaged);
        const run = await act({ cwd, home, task: 'continue', extra: ['--on-series', original.series!] });
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/is corrupt and will not be used \(not a serialized BrainSeries: the text is not JSON/);
      }

      // the same task and answer hash to the same refs: saving them again replaces the damaged files (before the fix, a
      // file damaged without changing its size was kept forever, since only the size was compared)
      await writeFile(seriesPath, oneByte);
      const again = await act({ cwd, home, task: 'a task worth keeping' });
      expect(again.code).toBe(0);
      expect([again.series, again.episode]).toEqual([original.series, original.episode]);
      expect(await readFile(seriesPath, 'utf8')).toBe(intact);
      expect((await store.getSeries(original.series!)).hash).toBe(original.series);
      expect((await store.getEpisode(original.episode!)).hash).toBe(original.episode);
      expect((await stat(seriesPath)).size).toBe(intact.length);
    },
    60_000,
  );
});

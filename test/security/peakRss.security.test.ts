// "peak RSS under 40 floods stays under 400 MB": a scripted model makes 40 bash calls in one turn,
// each flooding stdout and stderr, through the built CLI; the CLI process itself reports its peak RSS at exit
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startStandin } from '#standin/standin.js';
import type { Standin } from '#standin/types.js';
import { bash, runHostileModel, securityAttempt, tmpdirOutsideTmp, withIds, type SecurityOutcome } from './securityCase.js';
import { tempDir } from '#test-helpers/fs.js';

const FLOODS = 40;
const MAX_RSS_MB = 400;
/** per call and per stream: more than any single call keeps, so only a cap across calls bounds the total */
const FLOOD_BYTES = 9_000_000;
const NAME = `${FLOODS} bash calls in one turn, each flooding ${FLOOD_BYTES / 1e6} MB on stdout and on stderr: peak RSS under ${MAX_RSS_MB} MB`;

let standin: Standin;
beforeAll(async () => {
  standin = await startStandin({ cacheMinTokens: 0 });
});
afterAll(async () => standin?.close());

describe('bounded memory under parallel floods, default permission and sandbox, headless', () => {
  let outcome: SecurityOutcome | undefined;
  let peakMb = 0;

  beforeAll(async () => {
    const base = tempDir('bhrain-sec-rss-');
    for (const dir of ['ws', 'home', 'tmp']) mkdirSync(join(base, dir));
    // preloaded into the CLI: writes the process's own peak RSS (kB) when it exits
    const report = join(base, 'peak-rss-kb');
    writeFileSync(
      join(base, 'reportPeakRss.mjs'),
      `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(${JSON.stringify(report)}, String(process.resourceUsage().maxRSS)));\n`,
    );
    const flood = `yes flood | head -c ${FLOOD_BYTES}; yes err | head -c ${FLOOD_BYTES} >&2`;
    const { run, outcomes } = await runHostileModel({
      standin,
      cwd: join(base, 'ws'),
      home: join(base, 'home'),
      args: [],
      turns: [
        {
          judgeAfterExit: true,
          attempts: [
            {
              name: NAME,
              // each call differs, so the loop's repeat notice stays out of the picture
              calls: withIds(
                'f',
                Array.from({ length: FLOODS }, (_, index) => bash(`${flood} # flood ${index}`)),
              ),
              hit: () => {
                peakMb = Number(readFileSync(report, 'utf8')) / 1024;
                return peakMb >= MAX_RSS_MB ? `the CLI's peak RSS was ${Math.round(peakMb)} MB` : null;
              },
            },
          ],
        },
      ],
      // the spill files of the floods go in the test's own temp dir, removed with it
      env: { TMPDIR: join(base, 'tmp'), NODE_OPTIONS: `--import=${pathToFileURL(join(base, 'reportPeakRss.mjs')).href}` },
    });
    expect(run.stderr).not.toMatch(/unexpected failure/);
    outcome = outcomes.get(NAME);
    rmSync(base, { recursive: true, force: true });
  }, 60_000);

  it('the peak was measured (the CLI reported a plausible RSS)', () => {
    expect(peakMb).toBeGreaterThan(20);
  });

  securityAttempt('peak-rss', NAME, () => outcome);
});

/**
 * the tools that read in bhrain's own process (read, grep's built-in engine, glob's ignore files) against files with no
 * end or no answer: a pseudo-file whose stat says 0 (/proc/self/pagemap, which grew the CLI past 1.5 GB), devices that
 * never end, a FIFO with no writer and one whose writer never stops, a .gitignore linked to /dev/zero; by both grep
 * engines (the built-in one with ripgrep off PATH). One CLI run per attempt, so each peak is its own
 */
const PSEUDO_MAX_RSS_MB = 400;
const PSEUDO_ATTEMPTS: Array<{ name: string; call: { name: string; input: Record<string, unknown> }; why: RegExp; noRipgrep?: boolean }> = [
  {
    name: 'grep (rg) on /proc/self/pagemap',
    call: { name: 'grep', input: { pattern: 'needle', path: '/proc/self/pagemap' } },
    why: /binary/,
  },
  {
    name: 'grep (built-in) on /proc/self/pagemap',
    call: { name: 'grep', input: { pattern: 'needle', path: '/proc/self/pagemap' } },
    why: /binary/,
    noRipgrep: true,
  },
  { name: 'read of /proc/self/pagemap', call: { name: 'read', input: { path: '/proc/self/pagemap' } }, why: /binary/ },
  { name: 'read of /dev/zero', call: { name: 'read', input: { path: '/dev/zero' } }, why: /a character device/ },
  {
    name: 'grep (built-in) on /dev/urandom',
    call: { name: 'grep', input: { pattern: 'x', path: '/dev/urandom' } },
    why: /a character device/,
    noRipgrep: true,
  },
  { name: 'read of a FIFO with no writer', call: { name: 'read', input: { path: 'silent.fifo' } }, why: /a FIFO/ },
  {
    name: 'grep (built-in) on a FIFO whose writer never stops',
    call: { name: 'grep', input: { pattern: 'y', path: 'endless.fifo' } },
    why: /a FIFO/,
    noRipgrep: true,
  },
  { name: 'glob on a FIFO whose writer never stops', call: { name: 'glob', input: { pattern: '*', path: 'endless.fifo' } }, why: /a FIFO/ },
  {
    name: 'glob under a .gitignore linked to /dev/zero',
    call: { name: 'glob', input: { pattern: '**/*.txt', path: 'trap' } },
    why: /trap\/a\.txt/,
  },
  {
    name: 'grep (built-in) under a .gitignore linked to /dev/zero',
    call: { name: 'grep', input: { pattern: 'needle', path: 'trap' } },
    why: /trap\/a\.txt:1:needle/,
    noRipgrep: true,
  },
];

describe('bounded memory on pseudo-files, devices and FIFOs: read, grep and glob, default permission and sandbox, headless', () => {
  const outcomes = new Map<string, SecurityOutcome | undefined>();
  const peaksMb = new Map<string, number>();

  beforeAll(async () => {
    const base = realpathSync(mkdtempSync(join(tmpdirOutsideTmp(), 'bhrain-sec-pseudo-')));
    for (const dir of ['ws', 'home', 'tmp', 'no-rg']) mkdirSync(join(base, dir));
    const cwd = join(base, 'ws');
    execFileSync('mkfifo', [join(cwd, 'silent.fifo'), join(cwd, 'endless.fifo')]);
    const writer = spawn('sh', ['-c', `exec yes > ${join(cwd, 'endless.fifo')}`], { stdio: 'ignore' });
    // a repository whose .gitignore is a link to /dev/zero: glob and grep read ignore files
    mkdirSync(join(cwd, 'trap', '.git'), { recursive: true });
    writeFileSync(join(cwd, 'trap', 'a.txt'), 'needle\n');
    symlinkSync('/dev/zero', join(cwd, 'trap', '.gitignore'));
    // every program of PATH but rg, so grep takes its built-in engine
    const noRipgrep = join(base, 'no-rg');
    for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean))
      for (const name of (() => {
        try {
          return readdirSync(dir);
        } catch {
          return [];
        }
      })())
        if (name !== 'rg')
          try {
            symlinkSync(join(dir, name), join(noRipgrep, name));
          } catch {
            // an earlier entry of PATH has it
          }
    const report = join(base, 'peak-rss-kb');
    writeFileSync(
      join(base, 'reportPeakRss.mjs'),
      `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(${JSON.stringify(report)}, String(process.resourceUsage().maxRSS)));\n`,
    );
    try {
      for (const attempt of PSEUDO_ATTEMPTS) {
        rmSync(report, { force: true });
        const { run, outcomes: found } = await runHostileModel({
          standin,
          cwd,
          home: join(base, 'home'),
          args: [],
          turns: [
            {
              judgeAfterExit: true,
              attempts: [
                {
                  name: attempt.name,
                  calls: withIds('p', [attempt.call]),
                  hit: () => {
                    // a CLI killed by the kernel, or out of memory, never reports
                    if (!existsSync(report)) return 'the CLI exited without reporting its peak RSS (killed, or out of memory)';
                    const peakMb = Number(readFileSync(report, 'utf8')) / 1024;
                    peaksMb.set(attempt.name, peakMb);
                    return peakMb >= PSEUDO_MAX_RSS_MB ? `the CLI's peak RSS was ${Math.round(peakMb)} MB` : null;
                  },
                },
              ],
            },
          ],
          env: {
            TMPDIR: join(base, 'tmp'),
            NODE_OPTIONS: `--import=${pathToFileURL(join(base, 'reportPeakRss.mjs')).href}`,
            ...(attempt.noRipgrep ? { PATH: noRipgrep } : {}),
          },
        });
        expect(run.stderr).not.toMatch(/unexpected failure/);
        outcomes.set(attempt.name, found.get(attempt.name));
      }
    } finally {
      writer.kill('SIGKILL');
      rmSync(base, { recursive: true, force: true });
    }
  }, 120_000);

  for (const attempt of PSEUDO_ATTEMPTS)
    securityAttempt('peak-rss', `${attempt.name}: the CLI's peak RSS stays under ${PSEUDO_MAX_RSS_MB} MB`, () =>
      outcomes.get(attempt.name),
    );

  it('each peak was measured, and the model was told why its call gave what it gave (binary, the kind of file, or the matches)', () => {
    for (const attempt of PSEUDO_ATTEMPTS) {
      expect({ attempt: attempt.name, measured: (peaksMb.get(attempt.name) ?? 0) > 20 }).toEqual({ attempt: attempt.name, measured: true });
      expect({ attempt: attempt.name, result: outcomes.get(attempt.name)?.results[0] }).toEqual({
        attempt: attempt.name,
        result: expect.stringMatching(attempt.why),
      });
    }
  });
});

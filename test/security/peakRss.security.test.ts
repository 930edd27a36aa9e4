// issue 11, done-when "peak RSS under 40 floods stays under 400 MB": a scripted model makes 40 bash calls in one turn,
// each flooding stdout and stderr, through the built CLI; the CLI process itself reports its peak RSS at exit
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startStandin } from '../standin/standin.js';
import type { Standin } from '../standin/types.js';
import { bash, runHostileModel, securityAttempt, withIds, type SecurityOutcome } from './securityCase.js';

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
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'bhrain-sec-rss-')));
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

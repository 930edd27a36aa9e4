import { Command } from 'commander';

import { silentLog, type BrainLog } from '../core/contract/BrainContext.js';
import { BadRequestError, BhrainError, EpisodeCompactedError } from '../core/contract/errors.js';
import type { BrainRefStore } from '../core/continuation/genBrainRefStore.js';
import { EXIT_CODES, exitCodeOfError } from './exitCodes.js';

/** .what = a ref: the hex hash a run printed, or a prefix of at least 8 characters; no run id is one (it holds `-`) */
const REF = /^[0-9a-f]{8,64}$/;

/**
 * .what = the series hash a run id names (findRunById: the id, or its start or end), from the run records in home
 * .why = `bhrain export 3c3451 > series.json` carries the run a user sees in `bhrain runs`, without copying its hash
 */
const seriesOfRun = async (input: { arg: string; home: string }): Promise<string> => {
  const { listRunRecords } = await import('./runRecord.js');
  const { findRunById } = await import('./findRunById.js');
  const { runsDir, runs } = await listRunRecords({ home: input.home });
  const run = findRunById({
    runs,
    arg: input.arg,
    hint: `\`bhrain runs\` lists the recorded runs (kept in ${runsDir}); a ref is the hex hash (at least 8 characters) of a series or an episode that a prior run printed`,
  });
  if (!run.refs)
    throw new BadRequestError(
      `the run ${run.id} has not finished (it is still running, or it stopped before saving its series), so it has no series to export`,
    );
  return run.refs.series;
};

/**
 * .what = the text of `bhrain export <ref | run>`: the series (with all its episodes and summaries) or the episode that
 *         a hash or unique prefix names, or the series of the run a run id names, as indented JSON with its
 *         schemaVersion, verified on the way out
 * .why = one self-contained file is an artifact that CI job B continues from (`--on-series @plan.json`), with no
 *        shared store; it is the store's own serialization, so it is verified on read exactly like the store
 */
const exportBrainRef = async (input: { ref: string }, context: { store: BrainRefStore; log: BrainLog }): Promise<string> => {
  const found = await context.store.findRefs(input.ref);
  const total = found.series.length + found.episodes.length;
  if (!total)
    throw new BadRequestError(
      `no series or episode ${input.ref} in the ref store at ${context.store.location}. Check the ref a prior run printed, or set ${context.store.home === undefined ? 'BHRAIN_STORE (or --store)' : 'BHRAIN_HOME'} to the store it used`,
    );
  if (total > 1)
    throw new BadRequestError(
      `${input.ref} is ambiguous: ${found.series.length} series and ${found.episodes.length} episodes start with it; give more characters of the hash`,
    );
  // loaded here, not at start: zod comes with them, and `bhrain --help` should not pay for it
  const { serializeBrainEpisode, serializeBrainSeries } = await import('../core/contract/serializeBrainRef.js');
  if (found.series.length) return `${serializeBrainSeries(await context.store.getSeries(found.series[0], context), { indent: 2 })}\n`;
  try {
    return `${serializeBrainEpisode(await context.store.getEpisode(found.episodes[0], context), { indent: 2 })}\n`;
  } catch (error) {
    if (!(error instanceof EpisodeCompactedError)) throw error;
    // a compacted episode is closed, so a file of it would let --on-episode @file reopen it elsewhere
    throw new EpisodeCompactedError(
      `episode ${found.episodes[0]} has been compacted into the recap that opens the next episode of its series; export the series instead`,
      error.ref,
    );
  }
};

/**
 * .what = the `bhrain export <ref>` command: prints a series or an episode to stdout as a self-contained JSON file
 * .why = `bhrain export <ref> > plan.json` in one place, `--on-series @plan.json` in another; exit 2 for a bad,
 *        unknown or damaged ref, with the reason on stderr
 */
export const genExportCommand = (): Command =>
  new Command('export')
    .description(
      'print a series (with all its episodes) or an episode as one self-contained JSON file, verified like the store: `bhrain export <ref> > plan.json`, then `--on-series @plan.json` under any BHRAIN_HOME',
    )
    .argument(
      '<ref>',
      'the hash, or a unique prefix of at least 8 characters, of a series or an episode, as a run printed it; or a run id from `bhrain runs` (or its start or its end, if no other run shares it): its series',
    )
    .option(
      '--store <url>',
      'the shared ref store to read it from: s3://bucket/prefix (default: BHRAIN_STORE, your settings, else the local one)',
    )
    .action(async (ref: string, options: { store?: string }) => {
      // only a migration notice is logged: stdout holds the file alone
      const log: BrainLog = { ...silentLog, warn: (message) => process.stderr.write(`warning: ${message}\n`) };
      try {
        const { resolveStoreSetting } = await import('./settings/resolveStoreSetting.js');
        const { openBrainRefStore, getBhrainHome } = await import('../core/continuation/genBrainRefStore.js');
        const store = await openBrainRefStore({
          url: await resolveStoreSetting({ flag: options.store, env: process.env }),
          home: getBhrainHome(),
          endpoint: process.env.BHRAIN_S3_ENDPOINT || undefined,
          env: process.env,
        });
        const hash = REF.test(ref) ? ref : await seriesOfRun({ arg: ref, home: getBhrainHome() });
        process.stdout.write(await exportBrainRef({ ref: hash }, { store, log }));
        process.exitCode = EXIT_CODES.complete;
      } catch (error) {
        process.stderr.write(
          `bhrain export: ${error instanceof BhrainError ? '' : 'unexpected failure: '}${(error as Error)?.message ?? error}\n`,
        );
        process.exitCode = exitCodeOfError(error);
      }
    });

import type { BrainLog } from '../core/contract/BrainContext.js';
import type { BrainSeries } from '../core/contract/BrainSeries.js';
import { BadRequestError } from '../core/contract/errors.js';
import type { BrainRefStore } from '../core/continuation/genBrainRefStore.js';
import { findRunById } from './findRunById.js';
import { listRunRecords, type RunRecordMeta } from './runRecord.js';
import { selectRunsIn } from './selectRunsIn.js';

/** .what = how to carry a series to a job whose store is empty: what every "nothing to continue" message ends with */
const CARRY_HINT =
  'In a fresh CI job the store is empty: carry the series across jobs with `bhrain export <series hash> > series.json` in the job that ran it, then `--on-series @series.json` in the next (docs/continuation.md), or share one ref store between jobs (BHRAIN_STORE, docs/fleet.md) and pass `--on-series <series hash>`';

/**
 * .what = the run that --continue (the newest run recorded in this working directory, by real path, that saved its
 *         series) or --resume <run> (any recorded run that saved its series: findRunById) names
 * .why = a run has a series to continue once it ended: an unfinished record (running, or killed) is skipped by
 *        --continue and refused by --resume, with a message saying why
 */
const findRunToContinue = async (input: {
  continue: boolean;
  resume: string | undefined;
  cwd: string;
  home: string;
}): Promise<RunRecordMeta & { refs: NonNullable<RunRecordMeta['refs']> }> => {
  const { runsDir, runs } = await listRunRecords({ home: input.home });
  const kept = `bhrain keeps the records of runs in ${runsDir} (set BHRAIN_HOME to the home the run used); a run with --no-record or --record-dir leaves none there`;
  if (input.resume !== undefined) {
    const named = `--resume ${input.resume}`;
    const run = findRunById({ runs, arg: input.resume, label: named, hint: `\`bhrain runs\` lists them. ${kept}. ${CARRY_HINT}` });
    if (!run.refs)
      throw new BadRequestError(
        `${named}: the run ${run.id} has not finished (it is still running, or it stopped before saving its series), so it has no series to continue; \`bhrain show ${run.id}\` shows what it recorded`,
      );
    return { ...run, refs: run.refs };
  }
  const { dir: here, runs: runsHere } = await selectRunsIn({ runs, dir: input.cwd });
  const found = runsHere.find((run) => run.refs);
  if (found) return { ...found, refs: found.refs! };
  const unfinished = runsHere.length;
  const skipped = unfinished ? ` (${unfinished} run(s) here have not finished, so they have no series yet)` : '';
  throw new BadRequestError(`--continue: nothing to continue: no finished run was recorded in ${here}${skipped}. ${kept}. ${CARRY_HINT}`);
};

/**
 * .what = the series --continue or --resume continues, read from the ref store like --on-series <hash>: verified, so a
 *         damaged or missing series is exit 2 naming the run it came from
 * .why = "continue where I left off" in one word, without copying a hash from the last run's output
 */
export const resolveRunToContinue = async (
  input: { continue: boolean; resume: string | undefined; cwd: string; home: string },
  context: { store: BrainRefStore; log?: BrainLog },
): Promise<{ runId: string; series: BrainSeries }> => {
  const run = await findRunToContinue(input);
  try {
    return { runId: run.id, series: await context.store.getSeries(run.refs.series, context) };
  } catch (error) {
    // the store's own error (its class sets the exit code), told as this flag's, naming the run
    if (error instanceof Error)
      error.message = `${input.continue ? '--continue' : `--resume ${input.resume}`}: the series ${run.refs.series} of run ${run.id} (in ${run.cwd}) cannot be continued: ${error.message}`;
    throw error;
  }
};

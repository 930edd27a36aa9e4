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
 * .what = the run that --continue (the newest run recorded in this working directory, by real path, that ended without
 *         error and saved its series) or --resume <run> (any recorded run that saved its series: findRunById) names
 * .why = a failed run (a refused key, a supplier down) is no place to go on from: its last exchange is the error, so
 *        --continue passes it by, and --resume <its id> still takes it when asked. An unfinished record (running, or
 *        killed) has no series yet: skipped by --continue, refused by --resume, with a message saying why
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
  const failed = runsHere.filter((run) => run.termination === 'error');
  const found = runsHere.find((run) => run.refs && run.termination !== 'error');
  if (found) return { ...found, refs: found.refs! };
  const unfinished = runsHere.filter((run) => !run.refs).length;
  const skipped = [
    ...(failed.length
      ? [`${failed.length} failed, which --continue passes by: \`--resume ${failed[0].id}\` continues the newest of them`]
      : []),
    ...(unfinished ? [`${unfinished} not finished, so with no series yet`] : []),
  ];
  throw new BadRequestError(
    `--continue: nothing to continue: no run recorded in ${here} ended without error${skipped.length ? ` (of the runs here, ${skipped.join('; ')})` : ''}. ${kept}. ${CARRY_HINT}`,
  );
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

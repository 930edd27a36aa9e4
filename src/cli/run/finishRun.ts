import type { GitCheckpointer } from '../../agent/checkpoint/genGitCheckpointer.js';
import type { BrainReplOutput } from '../../agent/repl/genBrainRepl.js';
import { AbortedError } from '../../core/contract/errors.js';
import { redactBrainEpisode, redactBrainSeries } from '../../core/secrets/redactBrainRefs.js';
import { redactDeep } from '../../core/secrets/redactDeep.js';
import { describeTermination } from '../describeTermination.js';
import { EXIT_CODES, exitCodeOf } from '../exitCodes.js';
import type { OutputFile } from '../resolveOutputFile.js';
import { CHECKPOINTS_SCHEMA_VERSION, type RunRecord, type RunRecordCheckpoints } from '../runRecord.js';
import { OUTPUT_SCHEMA_VERSION, type SkillOutputJson } from '../skillOutputJson.js';
import { formatStopNotice } from './formatStopNotice.js';
import type { RunIo } from './genRunIo.js';
import type { PreparedRun } from './prepareRun.js';
import { writeOutput } from './writeOutput.js';

/** .what = how a run ended: its exit code, and the one result object (what --output json prints; null in text mode) */
export interface RunOutcome {
  exitCode: number;
  result: SkillOutputJson | null;
}

/** .what = the lines that name a run's refs and record: on stderr, and after the answer when rhachet hides stderr */
const formatRefLines = (refs: { episode: string; series: string; record: string | null }): string =>
  `episode: ${refs.episode}\nseries: ${refs.series}\n${refs.record ? `record: ${refs.record}\n` : ''}`;

/**
 * .what = the model's own text of a session's output: the output without bhrain's notice of an early stop at its end
 * .why = text mode prints the answer alone on stdout; the notice is said on stderr (formatStopNotice)
 */
const withoutNotice = (output: string, notice: string | null): string =>
  notice && output.endsWith(notice) ? output.slice(0, output.length - notice.length).replace(/\n\n$/, '') : output;

/**
 * .what = the run record finished, or removed when the run failed before the model answered once (no key, a refused
 *         key, the supplier down): its directory, or why it could not be written
 * .why = an unanswered run has nothing to read back nor to continue, as a usage error's record was never made
 *        (docs/continuation.md#refs-and-run-records)
 */
const keepRecord = (
  io: RunIo,
  record: RunRecord,
  input: { unanswered: boolean; finish: Parameters<RunRecord['finish']>[0] },
): Promise<{ dir: string | null; failure: string | null }> =>
  input.unanswered
    ? record.dispose().then(
        () => ({ dir: null, failure: null }),
        (failure: Error) => {
          io.warn(`the unfinished run record ${record.dir} could not be removed: ${io.redact(failure.message)}`);
          return { dir: null, failure: null };
        },
      )
    : record.finish(input.finish).then(
        (dir) => ({ dir, failure: null }),
        (failure: Error) => ({ dir: null, failure: `the run record could not be written: ${io.redact(failure.message)}` }),
      );

/**
 * .what = a run's checkpoints as its record keeps them (checkpoints.json): the work tree and the store, the episode the
 *         run went on from, why checkpointing stopped (null: it did not), and each checkpoint: turn, hash, files changed
 */
const recordedCheckpoints = (checkpointer: GitCheckpointer, continuedFrom: string | null): RunRecordCheckpoints => ({
  schemaVersion: CHECKPOINTS_SCHEMA_VERSION,
  root: checkpointer.store.root,
  store: checkpointer.store.gitDir,
  continuedFrom,
  failure: checkpointer.failure(),
  checkpoints: [...checkpointer.checkpoints()],
});

/**
 * .what = the end of a run that answered: the answer printed first (text: the model's text alone), then the refs and
 *         the run record saved together, the output file written, the exit code decided, the result object (json), the
 *         status line (or an early stop's notice), the errors and the refs lines printed, then the sinks' end (the GitHub
 *         summary, telemetry's task and answer)
 * .why = the answer was paid for: nothing that fails after it may take it away, and a failure after it changes the exit
 *        code (5), never swallows it
 */
export const finishRun = async (
  io: RunIo,
  run: PreparedRun & { record: RunRecord; outputFile: OutputFile | null; checkpointer: GitCheckpointer | null },
  result: BrainReplOutput<unknown>,
): Promise<RunOutcome> => {
  const { skill, options, redact, log, machine, writeLine, warnings } = io;
  const { outputFile } = run;
  const { session } = result;
  // the answer may hold a secret the model decoded from a form redaction cannot match (base64): nothing printed or kept does
  const output = redact(session.output);
  // stdout's answer: the model's text alone (empty when it wrote none), whatever bhrain says of it goes to stderr
  const said = redact(withoutNotice(session.output, session.notice));
  const structured = run.schema && session.termination === 'complete' ? redactDeep(result.output, redact) : undefined;
  const episode = redactBrainEpisode(result.episode, redact);
  const series = redactBrainSeries(result.series, redact);
  const sessionError = session.error;
  // a run stopped by Ctrl-C or SIGTERM ends in error AbortedError: scripts read it as interrupted (exit 130)
  const termination = sessionError instanceof AbortedError ? 'interrupted' : session.termination;
  let exitCode = exitCodeOf(session.termination, sessionError);

  // the answer first: it was paid for, and nothing that fails after it may take it away
  const answer = said && !said.endsWith('\n') ? `${said}\n` : said;
  if (!machine) process.stdout.write(answer);
  log.stop();

  // every run is a checkpoint, a failed one too (its exchange records the error), so there is always a ref to resume from
  const refsSaved = Promise.all([
    run.store.saveEpisode(episode),
    run.store.saveSeries(series),
    run.store.markCompacted(series.episodes.slice(0, -1).map((compacted) => compacted.hash)),
  ]).then(
    () => null,
    (error: Error) => `the refs could not be saved: ${redact(error.message)}`,
  );
  const metrics = {
    iterations: session.iterations,
    tokens: session.tokens,
    cost: { usd: session.cash?.total ?? null },
    elapsedMs: session.elapsedMs,
  };
  const { toolCalls } = session;
  // the end walk reads only the files whose stat changed since the start walk (their hashes are kept)
  const audit = await run.audit.finish({
    network: run.network?.audit() ?? null,
    tokens: session.tokens,
    costUsd: metrics.cost.usd,
    subagents: session.subagents,
  });
  const error = sessionError ? { code: sessionError.code, message: redact(sessionError.message) } : null;
  // the refs and the run record are written at the same time: the record names the refs by hash, known already
  const [refsFailure, recorded] = await Promise.all([
    refsSaved,
    keepRecord(io, run.record, {
      unanswered: termination === 'error' && session.iterations === 0,
      finish: {
        prompt: run.prompt,
        output,
        termination,
        refs: { episode: episode.hash, series: series.hash },
        metrics,
        transcript: session.transcript,
        ...(run.hookRuns ? { hooks: run.hookRuns.runs } : {}),
        ...(run.checkpointer ? { checkpoints: recordedCheckpoints(run.checkpointer, run.checkpoints?.continuedFrom ?? null) } : {}),
        audit,
        error,
        redact,
      },
    }),
  ]);
  const record = recorded.dir;
  const failures = [refsFailure, recorded.failure].filter((failure): failure is string => failure !== null);
  // in text mode the file holds the answer printed above; in machine mode the result object, written before stdout
  // gets it, so the object stdout gets says whether the file was written
  if (outputFile && !machine) await writeOutput(outputFile, answer, failures, redact);
  if (failures.length && exitCode === EXIT_CODES.complete) exitCode = EXIT_CODES.loop;
  if (options.failOnDenied && toolCalls.denied > 0 && exitCode === EXIT_CODES.complete) exitCode = EXIT_CODES.denied;

  const genJson = (): SkillOutputJson => ({
    type: 'result',
    schemaVersion: OUTPUT_SCHEMA_VERSION,
    skill,
    atom: run.atom.slug,
    output: structured ?? output,
    termination,
    exitCode,
    episode: { hash: episode.hash },
    series: { hash: series.hash },
    runId: record === null ? null : run.record.id,
    record,
    metrics,
    toolCalls: {
      ...toolCalls,
      denials: toolCalls.denials.map((denial) => ({
        callId: denial.callId,
        tool: denial.toolName,
        reason: redact(denial.reason),
        by: denial.by,
      })),
    },
    // where bash went through the domain proxy: only when the network opened by domain
    ...(run.network ? { network: run.network.audit() } : {}),
    audit,
    warnings,
    error: error ?? (failures.length ? { code: 'PERSIST', message: failures.join('; ') } : null),
  });
  if (machine && outputFile) {
    const failuresBefore = failures.length;
    await writeOutput(outputFile, `${JSON.stringify(genJson())}\n`, failures, redact);
    if (failures.length > failuresBefore && exitCode === EXIT_CODES.complete) exitCode = EXIT_CODES.loop;
  }
  const json = machine ? genJson() : null;
  if (json) writeLine(json);
  // the status line, in the JSON's terms; an early stop's is its notice, shown even when quiet (stdout holds no word of it)
  const ending = { termination, iterations: session.iterations };
  const stopNotice = formatStopNotice({
    skill,
    ...ending,
    budgetReached: session.budgetReached,
    terminationReason: session.terminationReason,
    answered: said.trim() !== '',
  });
  if (stopNotice) log.notice(stopNotice);
  else log.progress(log.color.dim(describeTermination(ending)));
  if (sessionError) log.error(sessionError.message);
  for (const failure of failures) log.error(`${failure} (the answer above is complete)`);
  if (exitCode === EXIT_CODES.denied) log.error(`${toolCalls.denied} tool call(s) were denied, and --fail-on-denied was given`);
  if (!options.quiet) {
    const refLines = formatRefLines({ episode: episode.hash, series: series.hash, record });
    process.stderr.write(refLines);
    // rhachet drops stderr on success: in text mode the refs follow the answer on stdout, after a blank line
    if (io.viaRhachet && !machine) process.stdout.write(`\n${refLines}`);
  }
  const ended = await io.sinks.onEnd({
    exitCode,
    termination,
    prompt: run.prompt,
    answer: output,
    error: error?.message ?? (failures.length ? failures.join('; ') : null),
    metrics: { ...metrics, costUsd: metrics.cost.usd },
    denials: toolCalls.denials.map((denial) => ({ tool: denial.toolName, reason: redact(denial.reason), by: denial.by })),
    audit,
  });
  return { exitCode: ended, result: json };
};

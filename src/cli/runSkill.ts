import { startRunAudit } from './audit/genRunAudit.js';
import { EXIT_CODES } from './exitCodes.js';
import type { SkillName, SkillOptions } from './genSkillCommand.js';
import { validateOptions } from './readSkillOptions.js';
import { resolveOutputFile, type OutputFile } from './resolveOutputFile.js';
import type { SkillSettingsFlags } from './settings/settingsTable.js';
import type { SkillOutputJson } from './skillOutputJson.js';
import { failRun } from './run/failRun.js';
import { finishRun, type RunOutcome } from './run/finishRun.js';
import { genAuditSink } from './run/genAuditSink.js';
import { genGithubSink } from './run/genGithubSink.js';
import { genRunIo, type RunIo } from './run/genRunIo.js';
import { genTelemetrySink } from './run/genTelemetrySink.js';
import { loadTelemetry } from './run/loadTelemetry.js';
import { prepareRun } from './run/prepareRun.js';
import { settleRun } from './run/settleRun.js';
import type { SkillHost } from './run/SkillHost.js';
import { startRun } from './run/startRun.js';
import { wantsGithubRun } from './run/wantsGithubRun.js';

export type { SkillHost } from './run/SkillHost.js';
// `bhrain skills` and `bhrain agents` reach their readers through this module, which a run loads anyway: a module of
// their own, shared with the run, would be one more file every run loads
export { listAgentSkills, listAgentTypes } from './resolveAgentFiles.js';

/**
 * .what = one run, the pipeline: prepare (flags → settings → atom → repl, every check) → start (record, signals, MCP
 *         servers, context) → run the session → finish (answer, refs, record, result) or fail; every output is a sink
 *         of io.sinks, added as it opens; what must be closed is closed on every way out, the sinks last
 * .why = one place owns the sequence; each step returns what a later one needs, and a new output is one new sink
 */
const runIn = async (io: RunIo, args: readonly string[], flags: SkillSettingsFlags): Promise<RunOutcome> => {
  const { skill, options, cwd, redact, sinks } = io;
  // what a failure's result names, as far as the run got
  let known: { outputFile: OutputFile | null; atom: string | null } = { outputFile: null, atom: null };
  let outcome: RunOutcome;
  try {
    // loaded only on GitHub: an ordinary run's start-up does not change
    if (wantsGithubRun(io)) {
      const { startGithubRun } = await import('./github/genGithubRun.js');
      const summaryPath = process.env.GITHUB_STEP_SUMMARY || null;
      sinks.add(
        genGithubSink(startGithubRun({ skill, stderr: process.stderr, redact, summaryPath, persistFailureExitCode: EXIT_CODES.loop })),
      );
    }
    const telemetry = loadTelemetry(io);
    validateOptions(options);
    // the end-of-run audit: its walk of the working directory begins with the first request (startRun)
    const audit = startRunAudit({ cwd, redact });
    sinks.add(genAuditSink(audit));
    const outputFile = await resolveOutputFile({ path: options.outputFile, cwd });
    known = { ...known, outputFile };
    const settled = await settleRun(io, flags, audit);
    known = { ...known, atom: settled.atom.slug };
    const prepared = await prepareRun(io, settled, audit, args);
    if (telemetry) sinks.add(genTelemetrySink(await telemetry.start()));
    const { context, record, checkpointer } = await startRun(io, prepared);
    const { prompt, on, schema, repl } = prepared;
    const result =
      skill === 'ask' ? await repl.ask({ say: prompt, on, schema }, context) : await repl.act({ do: prompt, on, schema }, context);
    outcome = await finishRun(io, { ...prepared, record, outputFile, checkpointer }, result);
  } catch (error) {
    outcome = await failRun(io, error, known);
  } finally {
    await io.closeAll();
  }
  // last, after the answer and the refs: telemetry's export delays the exit at most 2 s, never changes it
  await sinks.close(outcome.exitCode);
  return outcome;
};

/**
 * .what = one run of a skill: flags → config → loop → answer printed → refs saved → record written
 * .why = the one implementation behind `bhrain <skill>` and the rhachet skill; returns the exit code. The answer is
 *        delivered before anything that can fail after it, and a failure after it changes the exit code (5), never
 *        swallows it; with --output json or stream-json, stdout ends with exactly one result object in every case
 */
export const runSkill = async (
  skill: SkillName,
  options: SkillOptions,
  args: readonly string[] = [],
  /** the settings flags given explicitly (pickExplicitFlags); the env, the settings files and the defaults fill in the rest */
  flags: SkillSettingsFlags = {},
): Promise<number> => (await runIn(genRunIo(skill, options), args, flags)).exitCode;

/**
 * .what = one run of a skill hosted by another program in this process (`bhrain mcp serve`): the same run as the CLI's,
 *         with the task, the cwd and the stop signal the host gives; the result object --output json would print
 * .why = the host gets the answer, the termination, the refs and the cost as the CLI's JSON consumers do; nothing is
 *        read from stdin nor written to stdout (the host's channel)
 */
export const runSkillHosted = async (
  skill: SkillName,
  options: SkillOptions,
  flags: SkillSettingsFlags,
  host: SkillHost,
): Promise<SkillOutputJson> => {
  const io = genRunIo(skill, { ...options, output: 'json', outputFile: undefined, skill: undefined }, host);
  const { result } = await runIn(io, [], flags);
  // every way out of a machine run writes one result object: a missing one is a bug, said as one
  if (!result) throw new Error('the run ended without a result object');
  return result;
};

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Command } from 'commander';

import type { BhrainCheckpoint } from '../agent/checkpoint/BhrainCheckpointer.js';
import type { RewindPlan } from '../agent/checkpoint/rewindCheckpoints.js';
import { BadRequestError } from '../core/contract/errors.js';
import { EXIT_CODES } from './exitCodes.js';
import { reportReadCommandFailure, type ReadCommandContext } from './genRunsCommand.js';
import type { RunRecordCheckpoints, RunRecordMeta } from './runRecord.js';

/** .what = the options of `bhrain rewind`, as commander gives them */
interface RewindOptions {
  toTurn?: string;
  dryRun?: boolean;
  force?: boolean;
  output: string;
}

/** .what = what `bhrain rewind -o json` prints: one object */
export interface RewindJson {
  type: 'rewind';
  runId: string;
  /** the turn whose state the files are put back to: 0 = before the run */
  toTurn: number;
  checkpoint: string;
  dryRun: boolean;
  forced: boolean;
  restored: string[];
  removed: string[];
  /** the paths changed since the run; restored anyway with --force, else nothing was written */
  conflicts: RewindPlan['conflicts'];
  /** nested repositories the run changed: left as they are */
  skipped: string[];
  /** the episode to continue the conversation from (--on-episode), or null: the run began the conversation */
  continueFrom: { episode: string } | null;
}

/**
 * .what = the run `rewind` means: the one its argument names (findRunById, as `show` and --resume find a run), else the
 *         newest act run recorded in this directory (ask changes no file)
 */
const findRunToRewind = async (arg: string | undefined, context: { home: string; cwd: string }) => {
  const { listRunRecords } = await import('./runRecord.js');
  const { runs, runsDir } = await listRunRecords({ home: context.home });
  const kept = `\`bhrain runs\` lists them (kept in ${runsDir}; set BHRAIN_HOME to the home the run used)`;
  if (arg !== undefined) {
    const { findRunById } = await import('./findRunById.js');
    return findRunById({ runs, arg, hint: kept });
  }
  const { selectRunsIn } = await import('./selectRunsIn.js');
  const { dir, runs: here } = await selectRunsIn({ runs, dir: context.cwd });
  const run = here.find((candidate) => candidate.skill === 'act');
  if (!run) throw new BadRequestError(`no act run is recorded in ${dir}, so there is nothing to rewind: ${kept}, or name one`);
  return run;
};

/** .what = a record's checkpoints.json, checked; a run without one is exit 2 saying why it has none */
const readRecordCheckpoints = async (run: RunRecordMeta & { dir: string }): Promise<RunRecordCheckpoints> => {
  const path = join(run.dir, 'checkpoints.json');
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null)
    throw new BadRequestError(
      run.termination === null
        ? `the run ${run.id} has not finished (it is still running, or it was killed before it recorded its end), so its checkpoints are not recorded`
        : `the run ${run.id} recorded no checkpoints (an ask run, --no-checkpoints, or a bhrain before checkpoints), so it cannot be rewound`,
    );
  const { CHECKPOINTS_SCHEMA_VERSION } = await import('./runRecord.js');
  const { z } = await import('zod');
  const parsed = z
    .object({
      schemaVersion: z.literal(CHECKPOINTS_SCHEMA_VERSION),
      root: z.string(),
      store: z.string(),
      continuedFrom: z.string().nullable(),
      failure: z.string().nullable(),
      checkpoints: z.array(
        z.object({
          turn: z.number().int().min(0),
          hash: z.string().regex(/^[0-9a-f]{40}$/),
          files: z
            .object({ created: z.array(z.string()), changed: z.array(z.string()), deleted: z.array(z.string()), omitted: z.number() })
            .nullable(),
          takenAt: z.string(),
        }),
      ),
    })
    .safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new BadRequestError(
      `${path} is damaged or of another version (this bhrain reads version ${CHECKPOINTS_SCHEMA_VERSION}): ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`).join('; ')}`,
    );
  return parsed.data;
};

/** .what = the checkpoint --to-turn N means: the newest at or before turn N (a turn that changed nothing has none) */
const pickTarget = (checkpoints: readonly BhrainCheckpoint[], toTurn: number): BhrainCheckpoint =>
  [...checkpoints].reverse().find((checkpoint) => checkpoint.turn <= toTurn) ?? checkpoints[0];

/** .what = --to-turn's value: a whole number of at least 0, or exit 2 */
const readToTurn = (text: string | undefined): number => {
  if (text === undefined) return 0;
  const turn = Number(text);
  if (!Number.isInteger(turn) || turn < 0)
    throw new BadRequestError(`--to-turn must be a whole number of at least 0 (0 = before the run), got '${text}'`);
  return turn;
};

/** .what = the text `rewind` prints: what it restored (or would), then the ref to continue from */
const formatRewind = (json: RewindJson): string => {
  const verb = json.dryRun ? 'would restore' : 'restored';
  const to = json.toTurn === 0 ? 'before the run' : `after turn ${json.toTurn}`;
  const lines = [
    `${json.dryRun ? 'dry run: ' : ''}run ${json.runId}: files ${json.dryRun ? 'would be ' : ''}put back as they were ${to} (checkpoint ${json.checkpoint.slice(0, 12)})`,
    ...json.restored.map((path) => `  ${verb}  ${path}`),
    ...json.removed.map((path) => `  ${json.dryRun ? 'would remove' : 'removed'}  ${path}`),
    ...json.skipped.map((path) => `  left alone (a nested repository)  ${path}`),
    ...(json.restored.length + json.removed.length === 0 ? ['  nothing to restore: the files are as they were'] : []),
    ...(json.forced && json.conflicts.length ? [`  --force: restored over ${json.conflicts.length} file(s) changed since the run`] : []),
    json.continueFrom
      ? `continue the conversation from: --on-episode ${json.continueFrom.episode}`
      : 'the run began its conversation: nothing to continue from',
  ];
  return `${lines.join('\n')}\n`;
};

/**
 * .what = the conversation as it stood after turn N of a run: the episode it went on from, then its exchange with the
 *         tool-calling steps of turns 1 to N only (what turn N said as its output), saved in the ref store under its own
 *         hash; the run's own episode when turn N is its last that called tools, or when its steps cannot be matched to
 *         its turns (a turn before its last that called no tool: an empty answer the loop nudged)
 * .why = a rewind to turn N puts the files back as they were after it; `--on-episode` then goes on from the same point
 */
const episodeAfterTurn = async (run: RunRecordMeta, toTurn: number, context: { home: string }): Promise<string | null> => {
  if (!run.refs) return null;
  const { resolveStoreSetting } = await import('./settings/resolveStoreSetting.js');
  const { openBrainRefStore } = await import('../core/continuation/genBrainRefStore.js');
  const store = await openBrainRefStore({
    url: await resolveStoreSetting({ flag: undefined, env: process.env }),
    home: context.home,
    endpoint: process.env.BHRAIN_S3_ENDPOINT || undefined,
    env: process.env,
  });
  const episode = await store.getEpisode(run.refs.episode);
  const exchange = episode.exchanges.at(-1);
  const steps = exchange?.steps ?? [];
  const turns = run.metrics?.iterations ?? -1;
  // a step per turn: every turn but the last called tools (the last too, when the run stopped during its calls)
  if (!exchange || toTurn >= steps.length || (steps.length !== turns - 1 && steps.length !== turns)) return run.refs.episode;
  const { genBrainExchange } = await import('../core/contract/BrainExchange.js');
  const { genBrainEpisode } = await import('../core/contract/BrainEpisode.js');
  const atTurn = genBrainEpisode({
    exchanges: [
      ...episode.exchanges.slice(0, -1),
      genBrainExchange({ input: exchange.input, output: steps[toTurn - 1].said, steps: steps.slice(0, toTurn) }),
    ],
  });
  await store.saveEpisode(atTurn);
  return atTurn.hash;
};

/**
 * .what = rewinds one run: its record's checkpoints read, the plan made against the store (every object verified), the
 *         paths changed since refused unless --force, then the files put back (not with --dry-run)
 */
const rewindRun = async (arg: string | undefined, options: RewindOptions, context: { home: string; cwd: string }): Promise<RewindJson> => {
  const toTurn = readToTurn(options.toTurn);
  const run = await findRunToRewind(arg, context);
  const recorded = await readRecordCheckpoints(run);
  const { checkpoints } = recorded;
  const base = { type: 'rewind' as const, runId: run.id, toTurn, dryRun: !!options.dryRun, forced: !!options.force };
  const continueFrom = toTurn === 0 ? recorded.continuedFrom : await episodeAfterTurn(run, toTurn, context);
  const none = { restored: [], removed: [], conflicts: [], skipped: [], continueFrom: continueFrom ? { episode: continueFrom } : null };
  if (recorded.failure !== null && checkpoints.length < 2)
    throw new BadRequestError(`the run ${run.id} could not record its checkpoints (${recorded.failure}), so it cannot be rewound`);
  if (checkpoints.length === 0) return { ...base, checkpoint: '', ...none };
  const target = pickTarget(checkpoints, toTurn);
  const last = checkpoints.at(-1)!;
  const { openCheckpointStoreAt } = await import('../agent/checkpoint/checkpointStore.js');
  const { applyRewind, planRewind } = await import('../agent/checkpoint/rewindCheckpoints.js');
  const store = await openCheckpointStoreAt({ root: recorded.root, gitDir: recorded.store });
  const plan = await planRewind(store, { target: target.hash, last: last.hash }, { env: process.env });
  if (!options.dryRun) await applyRewind(store, { plan, force: !!options.force }, { env: process.env });
  const pathsOf = (action: 'restore' | 'remove') => plan.steps.filter((step) => step.action === action).map((step) => step.path);
  return {
    ...base,
    checkpoint: target.hash,
    ...none,
    restored: pathsOf('restore'),
    removed: pathsOf('remove'),
    conflicts: plan.conflicts,
    skipped: plan.skipped,
  };
};

/**
 * .what = `bhrain rewind [<run>] [--to-turn N] [--dry-run] [--force] [-o json]`: puts the files an act run changed back
 *         as they were before it (or after turn N), from its checkpoints (docs/continuation.md#rewind)
 * .why = the user's own uncommitted work and the run's changes are told apart by the checkpoints, which git alone cannot
 */
export const genRewindCommand = (context: ReadCommandContext & { cwd?: string } = {}): Command => {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const setExitCode = context.setExitCode ?? ((code: number) => void (process.exitCode = code));
  return new Command('rewind')
    .description('put back the files an act run changed, as they were before it (or after one of its turns)')
    .argument('[run]', 'a run id from `bhrain runs`, or its start or end; default: the newest act run recorded here')
    .option('--to-turn <n>', 'put the files back as they were after turn n (0: before the run, the default)')
    .option('--dry-run', 'say what would be restored, and write nothing')
    .option('--force', 'restore files changed since the run too (they are named; without it nothing is written)')
    .option('-o, --output <format>', 'text, or json (one object)', 'text')
    .addHelpText(
      'after',
      '\nExamples:\n  $ bhrain rewind --dry-run                 # what undoing the newest act run here would restore\n  $ bhrain rewind                           # undo it: its files as they were before it\n  $ bhrain rewind --to-turn 1 -o json       # back to after its first turn, as one JSON object',
    )
    .action(async (arg: string | undefined, options: RewindOptions) => {
      const json = options.output === 'json';
      try {
        if (!['text', 'json'].includes(options.output))
          throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
        const { getBhrainHome } = await import('../core/continuation/getBhrainHome.js');
        const done = await rewindRun(arg, options, { home: context.home ?? getBhrainHome(), cwd: context.cwd ?? process.cwd() });
        stdout.write(json ? `${JSON.stringify(done)}\n` : formatRewind(done));
        setExitCode(EXIT_CODES.complete);
      } catch (error) {
        reportReadCommandFailure({ command: 'rewind', error, json }, { stdout, stderr, setExitCode });
      }
    });
};

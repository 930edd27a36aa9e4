import { Command } from 'commander';

import { BadRequestError, BhrainError } from '../core/contract/errors.js';
import { EXIT_CODES, exitCodeOfError } from './exitCodes.js';
import type { RunRecordMeta } from './runRecord.js';
import { genUsageErrorJson } from './skillOutputJson.js';
import type { summarizeRun } from './summarizeRun.js';

/** .what = how many runs `bhrain runs` lists without --limit */
const DEFAULT_LIMIT = 20;

/** .what = where a command writes and how it ends; the process's own unless a test gives others */
export interface ReadCommandContext {
  /** where records and refs are kept; getBhrainHome() when absent */
  home?: string;
  stdout?: { write: (text: string) => unknown };
  stderr?: { write: (text: string) => unknown };
  setExitCode?: (code: number) => void;
}

/**
 * .what = how `runs` and `show` end on a failure: the message on stderr, with -o json also the one result object on
 *         stdout, and the error's exit code (1 for a crash)
 */
export const reportReadCommandFailure = (
  input: { command: string; error: unknown; json: boolean },
  context: Required<Pick<ReadCommandContext, 'stdout' | 'stderr' | 'setExitCode'>>,
): void => {
  const { error } = input;
  const known = error instanceof BhrainError;
  const message = known ? error.message : `unexpected failure: ${(error as Error)?.message ?? error}`;
  context.stderr.write(`bhrain ${input.command}: ${message}\n`);
  const exitCode = exitCodeOfError(error);
  if (input.json) context.stdout.write(`${JSON.stringify(genUsageErrorJson(message, { code: known ? error.code : 'CRASH', exitCode }))}\n`);
  context.setExitCode(exitCode);
};

/** .what = a time as local `YYYY-MM-DD HH:MM:SS`, the way a terminal user reads it */
const formatLocalTime = (iso: string): string => {
  const at = new Date(iso);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
};

/** .what = a directory as wide as maxChars at most: its end kept, which names it, and `…` for the rest */
const cutDir = (dir: string, maxChars: number): string => (dir.length > maxChars ? `…${dir.slice(dir.length - maxChars + 1)}` : dir);

/** .what = runs as an aligned table, one run a line, newest first: id, start, skill, how it ended, where, what */
const formatTable = (runs: ReadonlyArray<RunRecordMeta>, summarize: typeof summarizeRun): string => {
  const rows = [
    ['ID', 'STARTED', 'SKILL', 'TERMINATION', 'DIRECTORY', 'TASK'],
    ...runs.map((run) => {
      const { task, dir } = summarize(run, { maxTaskChars: 60 });
      return [run.id, formatLocalTime(run.startedAt), run.skill, run.termination ?? 'unfinished', cutDir(dir, 40), task];
    }),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return (
    rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ')).join('\n') +
    '\n'
  );
};

/**
 * .what = the `bhrain runs` command: the recorded runs under $BHRAIN_HOME/runs, newest first (id, start, skill,
 *         termination, directory, task); `--here` keeps those of this working directory, `--limit <n>`,
 *         `--output json` (each run's meta.json and its record directory)
 * .why = records left the working tree, so there must be a way to find them again; `bhrain show <id>` prints one
 */
export const genRunsCommand = (context: ReadCommandContext & { cwd?: string } = {}): Command => {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const setExitCode = context.setExitCode ?? ((code: number) => void (process.exitCode = code));
  return new Command('runs')
    .description('list the recorded runs, newest first (records are kept in $BHRAIN_HOME/runs)')
    .option('-n, --limit <n>', `how many runs to list (default ${DEFAULT_LIMIT})`)
    .option('--here', 'only the runs recorded in this working directory (by real path, the runs --continue chooses from)')
    .option('-o, --output <format>', 'text (a table) or json (one object: {schemaVersion, runs})', 'text')
    .addHelpText(
      'after',
      '\nExamples:\n  $ bhrain runs\n  $ bhrain runs --here --limit 5 -o json\n  $ bhrain show <id>      # one run: its answer, then its transcript (the end of its id will do)',
    )
    .action(async (options: { limit?: string; here?: boolean; output: string }) => {
      const json = options.output === 'json';
      try {
        if (!['text', 'json'].includes(options.output))
          throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
        const limit = options.limit === undefined ? DEFAULT_LIMIT : Number(options.limit);
        if (!(Number.isInteger(limit) && limit >= 1))
          throw new BadRequestError(`--limit must be a whole number of at least 1, got '${options.limit}'`);
        // loaded only now: `bhrain --help` stays fast
        const { listRunRecords, RUN_RECORD_SCHEMA_VERSION } = await import('./runRecord.js');
        const { getBhrainHome } = await import('../core/continuation/genBrainRefStore.js');
        // --here filters before the limit: every record is read then (retention keeps them few)
        const listed = await listRunRecords({ home: context.home ?? getBhrainHome(), limit: options.here ? undefined : limit });
        for (const skipped of listed.skipped) stderr.write(`bhrain runs: skipped ${skipped.dir}: ${skipped.reason}\n`);
        const here = options.here
          ? await (await import('./selectRunsIn.js')).selectRunsIn({ runs: listed.runs, dir: context.cwd ?? process.cwd() })
          : null;
        const runs = here ? here.runs.slice(0, limit) : listed.runs;
        if (json) stdout.write(`${JSON.stringify({ schemaVersion: RUN_RECORD_SCHEMA_VERSION, runs })}\n`);
        else if (runs.length) stdout.write(formatTable(runs, (await import('./summarizeRun.js')).summarizeRun));
        else stderr.write(`no runs recorded in ${here ? `${here.dir} (of those kept in ${listed.runsDir})` : listed.runsDir}\n`);
        setExitCode(EXIT_CODES.complete);
      } catch (error) {
        reportReadCommandFailure({ command: 'runs', error, json }, { stdout, stderr, setExitCode });
      }
    });
};

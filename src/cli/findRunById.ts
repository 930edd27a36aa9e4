import { BadRequestError } from '../core/contract/errors.js';
import { findNearestName } from '../core/text/findNearestName.js';
import type { RunRecordMeta } from './runRecord.js';
import { summarizeRun } from './summarizeRun.js';

/** .what = how many candidates an ambiguous run id lists before it counts the rest */
const MAX_LISTED = 10;

/**
 * .what = the message for an argument that names several runs: how many, then each one's id, task and directory
 * .why = the newest runs share a date prefix: the user picks the one they meant from what it was and where it ran
 */
export const describeAmbiguousRuns = (arg: string, candidates: ReadonlyArray<Pick<RunRecordMeta, 'id' | 'task' | 'cwd'>>): string => {
  const lines = candidates.slice(0, MAX_LISTED).map((run) => {
    const { task, dir } = summarizeRun(run, { maxTaskChars: 50 });
    return `  ${run.id}  ${task}  (in ${dir})`;
  });
  const more = candidates.length > MAX_LISTED ? [`  … and ${candidates.length - MAX_LISTED} more`] : [];
  return [`ambiguous: ${candidates.length} runs match '${arg}'; give more of the id of the one you mean:`, ...lines, ...more].join('\n');
};

/**
 * .what = the ids a mistyped argument most likely meant: those whose start or end, of the argument's length, is nearest
 *         to it (findNearestName: at most 2 edits, fewer for a short argument), newest first, at most 3
 * .why = a typo in the 6 hex digits a user copied (`3c3415`) is as far from a whole id as any other: compare like with like
 */
const nearestIds = (arg: string, ids: readonly string[]): string[] => {
  const maxDistance = Math.min(2, Math.floor(arg.length / 3));
  if (!maxDistance) return [];
  const near = findNearestName(
    arg,
    ids.flatMap((id) => [id.slice(0, arg.length), id.slice(-arg.length)]),
    maxDistance,
  );
  return near === undefined ? [] : ids.filter((id) => id.startsWith(near) || id.endsWith(near)).slice(0, 3);
};

/**
 * .what = the one run an argument names: the run of that exact id, else the one run whose id starts or ends with it.
 *         Several: a BadRequestError listing them (id, task, directory). None: one naming the nearest ids ("did you
 *         mean"), then the caller's hint. `label` (`--resume 3c34`) opens every message
 * .why = `show`, `export`, `--resume` find a run the same way, so `3c3451` (the tail of an id) or `2026-11-28T03` (its
 *        start) names the same run everywhere, and says the same thing when it does not
 */
export const findRunById = <Run extends Pick<RunRecordMeta, 'id' | 'task' | 'cwd'>>(input: {
  runs: readonly Run[];
  arg: string;
  hint: string;
  label?: string;
}): Run => {
  const { runs, arg } = input;
  const fail = (message: string) => new BadRequestError(input.label ? `${input.label}: ${message}` : message);
  if (!arg.trim()) throw fail(`give a run id, or its start or its end (the 6 hex digits), from \`bhrain runs\``);
  const exact = runs.find((run) => run.id === arg);
  if (exact) return exact;
  const candidates = runs.filter((run) => run.id.startsWith(arg) || run.id.endsWith(arg));
  if (candidates.length === 1) return candidates[0];
  if (candidates.length > 1) throw fail(describeAmbiguousRuns(arg, candidates));
  const near = nearestIds(
    arg,
    runs.map((run) => run.id),
  );
  throw fail(`no recorded run matches '${arg}'${near.length ? ` (did you mean ${near.join(' or ')}?)` : ''}; ${input.hint}`);
};

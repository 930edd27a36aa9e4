import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type * as Zod from 'zod';

import type { BhrainCheckpoint } from '../agent/checkpoint/BhrainCheckpointer.js';
import type { BrainTokens } from '../core/contract/BrainOutput.js';
import { BadRequestError, BhrainError } from '../core/contract/errors.js';
import { redactDeep } from '../core/secrets/redactDeep.js';

/**
 * .what = the version of a run record's meta.json; a record of another version is refused with a clear error
 * .note = 1: meta.json (id, times, skill, atom, cwd, termination, refs, metrics, error) beside input.md, output.md,
 *         transcript.json and spill/ (and hooks.json, every hook run, when the run had hooks: a file added, not a change;
 *         audit.json, the end-of-run audit, when the run finished; meta.json's task, the task's first line: a field added,
 *         read as null from a record written before it; checkpoints.json, an act run's checkpoints: a file added)
 */
export const RUN_RECORD_SCHEMA_VERSION = 1;

/**
 * .what = the retention rule, applied at the start of every run recorded under $BHRAIN_HOME/runs: a run is removed
 *         when it is older than keepDays AND not among the keepNewest newest runs
 * .why = records must not grow without bound, yet a quiet week never loses the last runs, nor a busy day today's
 */
export const RUN_RETENTION = { keepNewest: 100, keepDays: 7 } as const;

/** records hold prompts, answers and tool output: only their owner may read them */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
const DAY_MS = 86_400_000;

/** `2025-01-02T03-04-05-678Z-a1b2c3`: the UTC start time (sorts as text), then 24 random bits against collisions */
const RUN_ID = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z-[0-9a-f]{6}$/;

/** .what = whether a name is a run id (so a directory under runs/ is ours to list and prune) */
export const isRunId = (name: string): boolean => RUN_ID.test(name);

/** .what = when a run started, read from its id */
const startedAtOf = (id: string): number => {
  const [, year, month, day, hour, minute, second, ms] = RUN_ID.exec(id)!;
  return Date.UTC(+year, +month - 1, +day, +hour, +minute, +second, +ms);
};

const genRunId = (at: Date): string => `${at.toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;

/** .what = how much of the task's first line meta.json keeps: enough to recognize a run by, small enough to list cheaply */
const TASK_MAX_CHARS = 200;

/**
 * .what = a task as meta.json keeps it: its first line that is not blank, spaces collapsed, cut to TASK_MAX_CHARS with `…`
 * .why = `bhrain runs` and an ambiguous run id name each run by its task, from meta.json alone (input.md is not read)
 */
export const taskLineOf = (prompt: string): string => {
  const line = (prompt.split('\n').find((text) => text.trim()) ?? '').trim().replace(/\s+/g, ' ');
  return line.length > TASK_MAX_CHARS ? `${line.slice(0, TASK_MAX_CHARS - 1)}…` : line;
};

/** .what = a run's meta.json: what `bhrain runs` lists, cheap to read; termination null = unfinished */
export interface RunRecordMeta {
  schemaVersion: typeof RUN_RECORD_SCHEMA_VERSION;
  id: string;
  startedAt: string;
  endedAt: string | null;
  skill: string;
  atom: string;
  cwd: string;
  /** the task's first line (taskLineOf); null in a record written before this field */
  task: string | null;
  termination: string | null;
  refs: { episode: string; series: string } | null;
  metrics: RunRecordMetrics | null;
  error: { code: string; message: string } | null;
}

/**
 * .what = the shape meta.json must have to be read back
 * .why = zod is imported on the first read (`bhrain runs`, `show`): a run, which only writes its record, never loads it
 */
const genMetaSchema = (z: typeof Zod): Zod.ZodType<RunRecordMeta> =>
  z.object({
    schemaVersion: z.literal(RUN_RECORD_SCHEMA_VERSION),
    id: z.string().regex(RUN_ID),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    skill: z.string(),
    atom: z.string(),
    cwd: z.string(),
    task: z.string().nullable().default(null),
    termination: z.string().nullable(),
    refs: z.object({ episode: z.string(), series: z.string() }).nullable(),
    metrics: z
      .object({
        iterations: z.number(),
        tokens: z.object({ input: z.number(), output: z.number(), cache: z.object({ get: z.number(), set: z.number() }) }),
        cost: z.object({ usd: z.number().nullable() }),
        elapsedMs: z.number(),
      })
      .nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  });
let metaSchema: Zod.ZodType<RunRecordMeta> | null = null;

/** .what = what a finished run measured: the `metrics` of `--output json` */
export interface RunRecordMetrics {
  iterations: number;
  tokens: BrainTokens;
  cost: { usd: number | null };
  elapsedMs: number;
}

/** .what = a run record could not be written (disk full, read-only, permissions); the answer was already delivered */
export class RunRecordWriteError extends BhrainError {
  readonly code = 'RUN_RECORD_WRITE';
}

/** .what = writes a file whole or not at all (temp file, then rename), readable by its owner only */
const writePrivate = async (path: string, text: string): Promise<void> => {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, text, { mode: FILE_MODE, flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
};

const describeCause = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException)?.code;
  const message = (error as Error)?.message ?? String(error);
  return code === 'ENOSPC' ? `${code}: the disk is full; free space and run again` : (code ?? message);
};

/** .what = reads and checks a record's meta.json; throws a BadRequestError naming the file when it cannot be used */
export const readRunRecordMeta = async (dir: string): Promise<RunRecordMeta> => {
  const path = join(dir, 'meta.json');
  const text = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new BadRequestError(`no run record at ${dir}: ${path} cannot be read (${describeCause(error)})`, { cause: error });
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`the run record ${path} is not valid JSON (${(error as Error).message})`, { cause: error });
  }
  const version = (json as { schemaVersion?: unknown })?.schemaVersion;
  if (version !== RUN_RECORD_SCHEMA_VERSION)
    throw new BadRequestError(
      `the run record ${path} has schemaVersion ${JSON.stringify(version)}; this bhrain reads version ${RUN_RECORD_SCHEMA_VERSION}: read it with the bhrain that wrote it`,
    );
  const parsed = (metaSchema ??= genMetaSchema(await import('zod'))).safeParse(json);
  if (!parsed.success)
    throw new BadRequestError(
      `the run record ${path} is damaged: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`).join('; ')}`,
    );
  return parsed.data;
};

/**
 * .what = the recorded runs under $BHRAIN_HOME/runs, newest first, at most `limit`; records that cannot be read are
 *         skipped and listed with the reason
 * .why = `bhrain runs` and `bhrain show` read the same list; meta.json alone is read, so listing stays cheap
 */
export const listRunRecords = async (input: {
  home: string;
  limit?: number;
}): Promise<{ runsDir: string; runs: Array<RunRecordMeta & { dir: string }>; skipped: Array<{ dir: string; reason: string }> }> => {
  const runsDir = join(input.home, 'runs');
  const names = await readdir(runsDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw new BadRequestError(`cannot list the run records in ${runsDir} (${describeCause(error)})`, { cause: error });
  });
  const ids = names.filter(isRunId).sort().reverse();
  const runs: Array<RunRecordMeta & { dir: string }> = [];
  const skipped: Array<{ dir: string; reason: string }> = [];
  for (const id of ids) {
    if (runs.length >= (input.limit ?? Infinity)) break;
    const dir = join(runsDir, id);
    await readRunRecordMeta(dir).then(
      (meta) => void runs.push({ ...meta, dir }),
      (error: Error) => void skipped.push({ dir, reason: error.message }),
    );
  }
  return { runsDir, runs, skipped };
};

/**
 * .what = the retention rule (RUN_RETENTION) applied to a runs directory: removes every run older than keepDays that
 *         is not among the keepNewest newest; directories that are not run ids are left alone
 * .why = records leave the working tree for $BHRAIN_HOME, so bhrain itself must keep that directory bounded
 */
export const pruneRunRecords = async (
  input: { runsDir: string; keepNewest?: number; keepDays?: number },
  context: { now?: () => Date } = {},
): Promise<{ removed: string[]; failed: Array<{ dir: string; reason: string }> }> => {
  const keepNewest = input.keepNewest ?? RUN_RETENTION.keepNewest;
  const cutoffMs = (context.now?.() ?? new Date()).getTime() - (input.keepDays ?? RUN_RETENTION.keepDays) * DAY_MS;
  const names = await readdir(input.runsDir).catch(() => [] as string[]);
  const old = names
    .filter(isRunId)
    .sort()
    .reverse()
    .slice(keepNewest)
    .filter((id) => startedAtOf(id) < cutoffMs);
  const removed: string[] = [];
  const failed: Array<{ dir: string; reason: string }> = [];
  for (const id of old) {
    const dir = join(input.runsDir, id);
    // force: another run pruning at the same moment may have removed it already
    await rm(dir, { recursive: true, force: true }).then(
      () => void removed.push(dir),
      (error: unknown) => void failed.push({ dir, reason: describeCause(error) }),
    );
  }
  return { removed, failed };
};

/** .what = the version of a record's checkpoints.json; another version is refused by `bhrain rewind` with a clear error */
export const CHECKPOINTS_SCHEMA_VERSION = 1;

/**
 * .what = an act run's checkpoints, as its record keeps them (checkpoints.json): where the work tree and the store are,
 *         the episode the run went on from (null: it began a conversation), why checkpointing stopped (null: it did
 *         not), and each checkpoint, turn 0 the state before the run's first change
 */
export interface RunRecordCheckpoints {
  schemaVersion: typeof CHECKPOINTS_SCHEMA_VERSION;
  root: string;
  store: string;
  continuedFrom: string | null;
  failure: string | null;
  checkpoints: BhrainCheckpoint[];
}

/** .what = what a run hands its record when it has ended (the answer is already delivered) */
export interface RunRecordFinish {
  prompt: string;
  output: string;
  termination: string;
  refs: { episode: string; series: string } | null;
  metrics: RunRecordMetrics | null;
  transcript: unknown;
  /** every hook run (its HookCompleted event), written as hooks.json; absent when the run had no hooks */
  hooks?: readonly unknown[];
  /** an act run's checkpoints, written as checkpoints.json; absent when it recorded none (ask, --no-checkpoints) */
  checkpoints?: RunRecordCheckpoints;
  /** the end-of-run audit (genRunAudit), written as audit.json */
  audit?: unknown;
  /** why the run failed, when it did */
  error?: { code: string; message: string } | null;
  /** removes secret values from everything written */
  redact: (text: string) => string;
}

/** .what = an open run record: where it goes, where spill files go, and how it is finished or given up */
export interface RunRecord {
  id: string;
  /** the record's directory; null with --no-record */
  dir: string | null;
  /** where truncated tool outputs are spilled: <dir>/spill, or a private temp dir removed when the run ends */
  spillDir: string;
  /** writes input.md, output.md, transcript.json, then meta.json; returns the directory (null with --no-record) */
  finish: (input: RunRecordFinish) => Promise<string | null>;
  /** the run ends without finish: its unfinished record and any temp spill dir are removed; idempotent */
  dispose: () => Promise<void>;
}

/**
 * .what = opens the record of one run before it starts:
 *         - recordDir undefined: $BHRAIN_HOME/runs/<id>/ (0700), after pruning that directory by RUN_RETENTION;
 *         - recordDir a path (--record-dir): that directory, which must be new or empty (exit 2 otherwise);
 *         - recordDir null (--no-record): no record; spill files go to a private temp dir removed when the run ends.
 *         An in-progress meta.json (termination null) is written at once, so `bhrain runs` shows a running run.
 * .why = records leave the working tree (git status stays clean after `ask`); spill files live and die with their run.
 *        A home that cannot be written does not stop the run: finish then throws (exit 5), after the answer is out
 */
export const openRunRecord = async (
  input: { home: string; recordDir: string | null | undefined; skill: string; atom: string; cwd: string; prompt: string },
  context: { now?: () => Date; warn?: (message: string) => void } = {},
): Promise<RunRecord> => {
  const now = context.now ?? (() => new Date());
  const startedAt = now();
  let id = genRunId(startedAt);
  const meta = (): RunRecordMeta => ({
    schemaVersion: RUN_RECORD_SCHEMA_VERSION,
    id,
    startedAt: startedAt.toISOString(),
    endedAt: null,
    skill: input.skill,
    atom: input.atom,
    cwd: input.cwd,
    task: taskLineOf(input.prompt),
    termination: null,
    refs: null,
    metrics: null,
    error: null,
  });
  const writeMeta = (dir: string, value: RunRecordMeta) => writePrivate(join(dir, 'meta.json'), `${JSON.stringify(value, null, 2)}\n`);

  let dir: string | null = null;
  let openError: unknown = null;
  // a spill dir of our own in the temp dir, when the record has none: removed when the run ends
  let tempDir: string | null = null;
  // what dispose removes of a record never finished: the whole directory under runs/, or what we wrote in --record-dir
  let unfinished: string[] = [];

  if (input.recordDir === null) {
    tempDir = await mkdtemp(join(tmpdir(), 'bhrain-spill-'));
  } else if (input.recordDir !== undefined) {
    dir = resolve(input.cwd, input.recordDir);
    const entries = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[];
      throw new BadRequestError(
        `--record-dir ${input.recordDir}: ${dir} cannot be read (${describeCause(error)}): give a new or empty directory`,
        {
          cause: error,
        },
      );
    });
    if (entries.length)
      throw new BadRequestError(
        `--record-dir ${input.recordDir}: ${dir} is not empty (${entries.length} entries): give a new or empty directory, so no file of yours is overwritten`,
      );
    try {
      await mkdir(dir, { recursive: true, mode: DIR_MODE });
      await writeMeta(dir, meta());
    } catch (error) {
      throw new BadRequestError(
        `--record-dir ${input.recordDir}: cannot write in ${dir} (${describeCause(error)}): give a directory you can write`,
        {
          cause: error,
        },
      );
    }
    unfinished = [join(dir, 'meta.json'), join(dir, 'spill')];
  } else {
    const runsDir = join(input.home, 'runs');
    dir = join(runsDir, id);
    try {
      await mkdir(runsDir, { recursive: true, mode: DIR_MODE });
      // exclusive create: a clash of ids (same millisecond, same 24 random bits) takes a new id rather than sharing
      for (let attempt = 1; ; attempt++) {
        const created = await mkdir(dir, { mode: DIR_MODE }).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code !== 'EEXIST' || attempt >= 5) throw error;
            return false;
          },
        );
        if (created) break;
        id = genRunId(startedAt);
        dir = join(runsDir, id);
      }
      unfinished = [dir];
      await writeMeta(dir, meta());
      const pruned = await pruneRunRecords({ runsDir }, { now });
      for (const failure of pruned.failed) context.warn?.(`could not remove the old run record ${failure.dir} (${failure.reason})`);
    } catch (error) {
      // reported by finish, after the answer: a record must never cost the run; a directory made before the failure goes
      openError = error;
      for (const path of unfinished) await rm(path, { recursive: true, force: true }).catch(() => undefined);
      tempDir = await mkdtemp(join(tmpdir(), 'bhrain-spill-'));
    }
  }

  let finished = false;
  let disposed = false;
  const removeTemp = async () => {
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    tempDir = null;
  };
  const spillDir = tempDir ?? join(dir!, 'spill');

  return {
    id,
    dir,
    spillDir,
    finish: async (done) => {
      if (finished) throw new Error(`the run record ${id} was already finished`);
      finished = true;
      try {
        if (dir === null) return null;
        if (openError !== null)
          throw new RunRecordWriteError(`could not write the run record at ${dir} (${describeCause(openError)})`, { cause: openError });
        const redacted = (value: unknown) => `${JSON.stringify(redactDeep(value, done.redact), null, 2)}\n`;
        try {
          // each string is redacted before JSON.stringify: once encoded, a secret with `"` or `\` no longer matches its value
          await writePrivate(join(dir, 'input.md'), done.redact(done.prompt));
          await writePrivate(join(dir, 'output.md'), done.redact(done.output));
          await writePrivate(join(dir, 'transcript.json'), redacted(done.transcript));
          if (done.hooks) await writePrivate(join(dir, 'hooks.json'), redacted(done.hooks));
          if (done.audit) await writePrivate(join(dir, 'audit.json'), redacted(done.audit));
          // the work tree and the store as they are (rewind finds them by these paths), the lists of files redacted
          if (done.checkpoints) {
            const checkpoints = redactDeep(done.checkpoints.checkpoints, done.redact);
            await writePrivate(join(dir, 'checkpoints.json'), `${JSON.stringify({ ...done.checkpoints, checkpoints }, null, 2)}\n`);
          }
          // meta.json last: a record whose meta says it ended holds every file
          const ended: RunRecordMeta = {
            ...meta(),
            endedAt: now().toISOString(),
            termination: done.termination,
            refs: done.refs,
            metrics: done.metrics,
            error: done.error ?? null,
          };
          await writeMeta(dir, redactDeep(ended, done.redact));
        } catch (error) {
          throw new RunRecordWriteError(`could not write the run record at ${dir} (${describeCause(error)})`, { cause: error });
        }
        return dir;
      } finally {
        await removeTemp();
      }
    },
    dispose: async () => {
      if (disposed) return;
      disposed = true;
      await removeTemp();
      if (!finished && openError === null) for (const path of unfinished) await rm(path, { recursive: true, force: true });
    },
  };
};

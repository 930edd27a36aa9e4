import type { NetworkAudit } from '../sandbox/network/startDomainProxy.js';
import type { RunAudit } from './audit/genRunAudit.js';

/**
 * .what = the one JSON object `--output json` prints (and `--output stream-json` ends with), versioned
 * .why = CI scripts parse it: its shape changes only with schemaVersion, and schemas/output.schema.json publishes it
 * .note = schemaVersion 1: the first published shape; a field is only ever added within a version (runId, added)
 */
export const OUTPUT_SCHEMA_VERSION = 1;

/** .what = a tool call that was not run because a guard denied it, the user refused it, or there was no way to ask */
export interface SkillDenial {
  callId: string;
  tool: string;
  reason: string;
  by: 'guard' | 'prompt' | 'no-prompter' | 'hook';
}

/**
 * .what = the counts of a run's tool calls: made (answered), failed (answered with an error that was not a denial),
 *         denied (by a guard, a refusal at the prompt, or no way to ask), promptedDenied (refused at the prompt)
 */
export interface SkillToolCalls {
  made: number;
  failed: number;
  denied: number;
  promptedDenied: number;
  denials: SkillDenial[];
}

export interface SkillOutputJson {
  type: 'result';
  schemaVersion: typeof OUTPUT_SCHEMA_VERSION;
  skill: 'act' | 'ask' | null;
  atom: string | null;
  /** the answer: text, or with --json-schema the validated JSON value; null when no run happened */
  output: unknown;
  /** why the run ended; `usage` when it never started (bad flags or input) */
  termination: 'complete' | 'max-iterations' | 'budget' | 'error' | 'clarification' | 'refusal' | 'terminated' | 'interrupted' | 'usage';
  exitCode: number;
  episode: { hash: string } | null;
  series: { hash: string } | null;
  /**
   * the id of the run's record (its meta.json's id, the directory's name under $BHRAIN_HOME/runs), what `show`,
   * `export` and `--resume` take; null when no record was written (--no-record, a run that failed before the model
   * answered, a record that could not be written). With --record-dir, the id in that record's meta.json
   */
  runId: string | null;
  /** where the run record is, null with --no-record or when none could be written */
  record: string | null;
  metrics: {
    iterations: number;
    /** reasoning: of output, the reasoning tokens, when the supplier reports them apart (openai) */
    tokens: { input: number; output: number; cache: { get: number; set: number }; reasoning?: number };
    cost: { usd: number | null };
    elapsedMs: number;
  } | null;
  toolCalls: SkillToolCalls;
  /** with allowed domains (the network opened by domain): the patterns, the hosts bash reached, the hosts refused */
  network?: NetworkAudit;
  /** the end-of-run audit: files created, changed, deleted; commands; MCP tools; subagents; hooks; hosts; spend. Absent
   *  when the run did not finish (a usage error, a crash) */
  audit?: RunAudit;
  warnings: string[];
  error: { code: string; message: string } | null;
}

/** .what = no tool calls at all */
const NO_TOOL_CALLS: SkillToolCalls = { made: 0, failed: 0, denied: 0, promptedDenied: 0, denials: [] };

/** .what = the JSON object for a run that never started: bad flags or input, exit 2 */
export const genUsageErrorJson = (
  message: string,
  input: { skill?: 'act' | 'ask'; code?: string; exitCode?: number } = {},
): SkillOutputJson => ({
  type: 'result',
  schemaVersion: OUTPUT_SCHEMA_VERSION,
  skill: input.skill ?? null,
  atom: null,
  output: null,
  termination: 'usage',
  exitCode: input.exitCode ?? 2,
  episode: null,
  series: null,
  runId: null,
  record: null,
  metrics: null,
  toolCalls: NO_TOOL_CALLS,
  warnings: [],
  error: { code: input.code ?? 'BAD_REQUEST', message },
});

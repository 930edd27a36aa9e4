import { BadRequestError, BhrainError } from '../../core/contract/errors.js';
import { EXIT_CODES, exitCodeOfError } from '../exitCodes.js';
import type { OutputFile } from '../resolveOutputFile.js';
import { genUsageErrorJson, type SkillOutputJson } from '../skillOutputJson.js';
import type { RunOutcome } from './finishRun.js';
import type { RunIo } from './genRunIo.js';
import { writeOutput } from './writeOutput.js';

/**
 * .what = the end of a run that threw: what the sinks began given up (the record, the audit's walk), the message (the
 *         stack with --debug, for a crash), the one result object with --output json, the output file emptied of any
 *         older result, then the sinks' end; the error's exit code
 */
export const failRun = async (
  io: RunIo,
  error: unknown,
  /** what the run had got to: its output file and its atom, once known */
  known: { outputFile: OutputFile | null; atom: string | null },
): Promise<RunOutcome> => {
  const { skill, options, redact, machine } = io;
  io.log.stop();
  await io.sinks.onFailure();
  const typed = error instanceof BhrainError;
  const exitCode = exitCodeOfError(error);
  const message = redact(typed ? error.message : `unexpected failure: ${(error as Error)?.message ?? error}`);
  const stack = options.debug ? `\n${redact(String((error as Error)?.stack))}` : ' (run with --debug for the stack)';
  process.stderr.write(`bhrain ${skill}: ${message}${typed ? '' : stack}\n`);
  const termination = error instanceof BadRequestError ? 'usage' : exitCode === EXIT_CODES.interrupted ? 'interrupted' : 'error';
  const json = machine
    ? ({
        ...genUsageErrorJson(message, { skill, code: typed ? error.code : 'CRASH', exitCode }),
        atom: known.atom,
        warnings: io.warnings,
        termination,
      } as SkillOutputJson)
    : null;
  // the file never keeps an older run's result: it gets this run's error object, or (text) the empty answer
  if (known.outputFile) await writeOutput(known.outputFile, json ? `${JSON.stringify(json)}\n` : '', [], redact);
  if (json) io.writeLine(json);
  const ended = await io.sinks.onEnd({
    exitCode,
    termination,
    prompt: null,
    answer: null,
    error: message,
    metrics: null,
    denials: [],
    audit: null,
  });
  return { exitCode: ended, result: json };
};

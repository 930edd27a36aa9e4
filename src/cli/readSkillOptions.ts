import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { BRAIN_REPL_ARCHS } from '../agent/repl/genBrainRepl.js';
import type { BrainThinking } from '../core/contract/BrainAtom.js';
import { BadRequestError } from '../core/contract/errors.js';
import { didYouMean } from '../core/text/findNearestName.js';
import { OUTPUT_FORMATS, type SkillOptions } from './genSkillCommand.js';

/** .what = the --json-schema value: inline JSON, or a file holding it */
export const readJsonSchema = async (value: string | undefined, cwd: string): Promise<object | undefined> => {
  if (value === undefined) return undefined;
  const text = value.trim().startsWith('{')
    ? value
    : await readFile(resolve(cwd, value), 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new BadRequestError(
          `--json-schema ${value}: not inline JSON (it does not start with {) and not a readable file (${error.code ?? error.message})`,
        );
      });
  try {
    const schema = JSON.parse(text);
    if (schema && typeof schema === 'object' && !Array.isArray(schema)) return schema;
  } catch (error) {
    throw new BadRequestError(`--json-schema: not valid JSON (${(error as Error).message})`);
  }
  throw new BadRequestError('--json-schema: a JSON Schema is a JSON object, e.g. {"type":"object","required":["files"]}');
};

/**
 * .what = what the flags add at the end of the system prompt: --system-prompt-file's text, then --append-system-prompt's
 * .why = a file that cannot be read, or is not text, is the caller's mistake: exit 2 naming the flag, before anything runs
 */
export const readSystemPromptAdditions = async (
  options: SkillOptions,
  appendSystemPrompt: string | undefined,
  cwd: string,
): Promise<string | undefined> => {
  let fromFile: string | undefined;
  if (options.systemPromptFile !== undefined) {
    const file = options.systemPromptFile;
    const bytes = await readFile(resolve(cwd, file)).catch((error: NodeJS.ErrnoException) => {
      throw new BadRequestError(
        `--system-prompt-file ${file}: not a readable file (${error.code ?? error.message}); give the path of a text file`,
      );
    });
    try {
      fromFile = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new BadRequestError(`--system-prompt-file ${file}: not UTF-8 text; give the path of a text file`);
    }
  }
  const parts = [fromFile, appendSystemPrompt].filter((part): part is string => !!part?.trim());
  return parts.length ? parts.map((part) => part.trim()).join('\n\n') : undefined;
};

/**
 * .what = --thinking as the atom's thinking option: off, or a whole number of tokens (the atom checks its minimum)
 * .why = a typo fails before the run starts, naming the flag and what it takes
 */
export const readThinking = (value: string | undefined): BrainThinking | undefined => {
  if (value === undefined) return undefined;
  if (value.trim() === 'off') return 'off';
  if (!/^\d+$/.test(value.trim()))
    throw new BadRequestError(
      `--thinking '${value}' is not a thinking budget: give a whole number of tokens (claude: at least 1024), or off`,
    );
  return { budgetTokens: Number(value.trim()) };
};

/** .what = the flags that are not settings, checked before anything runs; each failure names the flag and the valid choices */
export const validateOptions = (options: SkillOptions) => {
  if (options.cd !== undefined && !statSync(options.cd, { throwIfNoEntry: false })?.isDirectory())
    throw new BadRequestError(`-C ${options.cd}: not a directory; give the directory to run in`);
  if (!BRAIN_REPL_ARCHS.includes(options.arch as (typeof BRAIN_REPL_ARCHS)[number]))
    throw new BadRequestError(
      `unknown --arch '${options.arch}': ${didYouMean(options.arch, BRAIN_REPL_ARCHS)}choose one of ${BRAIN_REPL_ARCHS.join(', ')}`,
    );
  if (!OUTPUT_FORMATS.includes(options.output as (typeof OUTPUT_FORMATS)[number]))
    throw new BadRequestError(
      `unknown --output '${options.output}': ${didYouMean(options.output, OUTPUT_FORMATS)}choose ${OUTPUT_FORMATS.join(', ')}`,
    );
  if (options.includePartial && options.output !== 'stream-json') throw new BadRequestError('--include-partial needs --output stream-json');
  if (options.onEpisode && options.onSeries)
    throw new BadRequestError(
      'give --on-episode or --on-series, not both: --on-series continues a conversation, --on-episode branches from a checkpoint',
    );
  const continuing = [
    options.continue && '--continue',
    options.resume !== undefined && '--resume',
    options.onSeries !== undefined && '--on-series',
    options.onEpisode !== undefined && '--on-episode',
  ].filter((flag): flag is string => !!flag);
  if (continuing.length > 1 && (options.continue || options.resume !== undefined))
    throw new BadRequestError(
      `give one of ${continuing.join(', ')}, not ${continuing.length === 2 ? 'both' : 'several'}: each names the conversation to continue (--continue the newest run here, --resume a run by id, --on-series/--on-episode a ref)`,
    );
  if (options.recordDir !== undefined && !options.record) throw new BadRequestError('give --record-dir or --no-record, not both');
};

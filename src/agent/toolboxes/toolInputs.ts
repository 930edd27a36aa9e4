import * as z from 'zod/mini';

import { lenientInput } from '../tool/lenientInput.js';

// the zod schemas that check the calls of bhrain's own tools. Each tool gives the model its JSON Schema as written and
// imports this module on its first call (deferInput), so a run that calls no tool loads no zod; deferInput.test.ts holds
// each written JSON Schema equal to the one its zod schema here makes. It imports nothing of bhrain's but lenientInput:
// what the schemas need comes as arguments, so that this lazy chunk shares no module with the start-up path

/** Linux's MAX_ARG_STRLEN (32 pages) less the terminating NUL: the longest `bash -c` string an exec takes */
const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/** .what = read's input */
export const readZodInput = (defaultLimitLines: number) =>
  z.strictObject({
    path: lenientInput.path().check(z.describe('The file to read: relative to the working directory, or absolute.')),
    offset: lenientInput.optional(
      lenientInput.integer(1).check(z.describe('The 1-based line number to start from (default 1). Use it to continue a long file.')),
    ),
    limit: lenientInput.optional(lenientInput.integer(1).check(z.describe(`How many lines to show (default ${defaultLimitLines}).`))),
  });

/** .what = write's input */
export const writeZodInput = () =>
  z.strictObject({
    path: lenientInput
      .path()
      .check(z.describe('The file to write: relative to the working directory, or absolute. Missing directories are created.')),
    content: z.string().check(z.describe('The complete new content of the file.')),
  });

/** .what = edit's input */
export const editZodInput = () =>
  z.strictObject({
    path: lenientInput.path().check(z.describe('The file to edit: relative to the working directory, or absolute.')),
    old_string: z
      .string()
      .check(z.describe('The exact text to replace, whitespace included. Empty only to create a file that does not exist.')),
    new_string: z.string().check(z.describe('The text to put in its place (must differ from old_string).')),
    replace_all: lenientInput.optional(
      lenientInput
        .boolean()
        .check(z.describe('Replace every occurrence of old_string (default false: old_string must occur exactly once).')),
    ),
  });

/** .what = glob's input */
export const globZodInput = () =>
  z.strictObject({
    pattern: lenientInput
      .nonEmptyString()
      .check(z.describe('The glob to match file paths against, relative to path, e.g. "**/*.ts" or "src/**/*.{ts,tsx}".')),
    path: lenientInput.optional(
      z.string().check(
        z.refine((value) => !value.includes('\0'), 'must not contain a NUL character'),
        z.describe('The directory to search under (default: the working directory).'),
      ),
    ),
    include_ignored: lenientInput.optional(
      lenientInput
        .boolean()
        .check(z.describe('Also list files git ignores, hidden directories and node_modules (default: false). .git is always skipped.')),
    ),
  });

/** .what = grep's input */
export const grepZodInput = () =>
  z.strictObject({
    pattern: lenientInput.nonEmptyString().check(z.describe('The regular expression to search for, e.g. "function\\s+load\\w*".')),
    path: lenientInput.optional(
      z.string().check(
        z.refine((value) => !value.includes('\0'), 'must not contain a NUL character'),
        z.describe('The file or directory to search (default: the working directory).'),
      ),
    ),
    glob: lenientInput.optional(
      z.string().check(z.describe('Only search files matching this glob, e.g. "*.ts", "src/**/*.{ts,tsx}", or "!*.test.ts" to exclude.')),
    ),
    include_ignored: lenientInput.optional(
      lenientInput
        .boolean()
        .check(z.describe('Also search files git ignores, hidden directories and node_modules (default: false). .git is always skipped.')),
    ),
  });

/** .what = websearch's input */
export const websearchZodInput = (maxResultsLimit: number) =>
  z.strictObject({
    query: z.string().check(
      z.refine((value) => value.trim() !== '', 'must not be empty: write what to search for, e.g. "vitest 4 release notes"'),
      z.describe('What to search for, as you would type it into a search engine.'),
    ),
    max_results: z.optional(
      z
        .int()
        .check(z.minimum(1), z.maximum(maxResultsLimit), z.describe(`How many results to return, 1 to ${maxResultsLimit}. Default 5.`)),
    ),
  });

/** .what = bash's input */
export const bashZodInput = (settings: { defaultTimeoutMs: number; maxTimeoutMs: number }) =>
  z.strictObject({
    command: z.string().check(
      z.refine((command) => command.trim() !== '', 'must not be empty: give the command to run, e.g. {"command": "ls -la"}'),
      z.refine((command) => !command.includes('\0'), 'must not contain a NUL character: bash cannot take one'),
      z.refine((command) => Buffer.byteLength(command) <= MAX_COMMAND_BYTES, {
        error: (issue) =>
          `is ${Buffer.byteLength(String(issue.input))} bytes, and bash -c takes at most ${MAX_COMMAND_BYTES} (Linux's limit on one argument): write the script to a file first (with the write tool, or in parts), then run the file`,
      }),
      z.describe('The command to run with `bash -c`, in the working directory. Pipes, redirects, && and quoting work as in a shell.'),
    ),
    // no schema maximum: a larger value is clamped (and said), not rejected
    timeout_ms: z.optional(
      z
        .int()
        .check(
          z.minimum(1),
          z.describe(
            `How long the command may run, in milliseconds. Default ${settings.defaultTimeoutMs}, at most ${settings.maxTimeoutMs}.`,
          ),
        ),
    ),
  });

/** .what = task's input */
export const taskZodInput = (names: readonly string[]) =>
  z.strictObject({
    description: z.string().check(
      z.refine((value) => value.trim() !== '', 'must not be empty: a 3-5 word label'),
      z.describe('a short label for the task, 3-5 words'),
    ),
    prompt: z.string().check(
      z.refine((value) => value.trim() !== '', 'must not be empty: the whole task, as the subagent sees nothing else'),
      z.describe('the task, with everything the subagent needs to know: it sees none of this conversation'),
    ),
    subagent_type: z.enum(names as [string, ...string[]]).check(z.describe('which kind of subagent does the task')),
  });

/** .what = the skill tool's input */
export const skillZodInput = () =>
  z.strictObject({
    name: lenientInput.nonEmptyString().check(z.describe('The name of the skill to load, as the system prompt lists it.')),
  });

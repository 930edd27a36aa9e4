import { parseDocument } from 'yaml';

import { readTextFile } from './readTextFile.js';
import { splitFrontMatter } from './splitFrontMatter.js';

/**
 * .what = the largest SKILL.md or agent file (.bhrain/agents/*.md) read, in bytes: a larger one is a warning and is
 *         skipped, so a huge file never reaches the prompt; longer material belongs in the files beside a skill, read on
 *         demand
 */
export const AGENT_FILE_MAX_BYTES = 64 * 1024;

export { readTextFile } from './readTextFile.js';
export { splitFrontMatter } from './splitFrontMatter.js';

/** .what = a file of front matter and instructions read: its fields and body, or the problem that makes it unusable */
export type FrontMatterFile = { ok: true; fields: Record<string, unknown>; body: string } | { ok: false; problem: string };

/** .what = the aliases a front matter may expand, at most: a few anchors are fine, a "billion laughs" is not */
const MAX_ALIAS_COUNT = 50;

/**
 * .what = reads a SKILL.md or an agent file: its YAML front matter parsed as data (the core schema: no custom tags, no
 *         code, unique keys, few aliases) and its body; every way it can be unusable is a problem that says why
 * .why = a bad file is a warning naming it and the problem, never a crash; this module loads the YAML parser, so it is
 *        imported only once such a file exists (the skill tool imports it on its first call, for the same reading)
 */
export const readFrontMatterFile = async (path: string, maxBytes: number = AGENT_FILE_MAX_BYTES): Promise<FrontMatterFile> => {
  const read = await readTextFile(path, maxBytes);
  if (!read.ok) return read;
  const split = splitFrontMatter(read.text);
  if ('problem' in split) return { ok: false, problem: split.problem };
  const document = parseDocument(split.frontMatter, { schema: 'core', uniqueKeys: true, prettyErrors: true });
  if (document.errors.length) {
    const [error] = document.errors;
    // the front matter starts on the file's second line
    const line = error.linePos ? ` (line ${error.linePos[0].line + 1})` : '';
    const message = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    return { ok: false, problem: `has front matter that is not valid YAML${line}: ${message}` };
  }
  let fields: unknown;
  try {
    fields = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    return { ok: false, problem: `has front matter that could not be read: ${(error as Error).message.split('\n')[0]}` };
  }
  if (fields === null || fields === undefined)
    return { ok: false, problem: 'has empty front matter: give at least name: and description:' };
  if (typeof fields !== 'object' || Array.isArray(fields))
    return { ok: false, problem: 'has front matter that is not a set of fields (name: ..., description: ...)' };
  return { ok: true, fields: fields as Record<string, unknown>, body: split.body };
};

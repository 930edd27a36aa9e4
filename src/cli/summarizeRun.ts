import { homedir } from 'node:os';
import { sep } from 'node:path';

import type { RunRecordMeta } from './runRecord.js';

/** .what = a text cut to maxChars, its end replaced by `…` when cut */
const cut = (text: string, maxChars: number): string => (text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text);

/**
 * .what = a run as a person recognizes it in a list: its task's first line cut to maxTaskChars (`-` when the record is
 *         older than the field), and its directory with `~` for the home directory
 * .why = `bhrain runs` and an ambiguous run id list runs the same way: an id alone says when, not what nor where
 */
export const summarizeRun = (
  run: Pick<RunRecordMeta, 'task' | 'cwd'>,
  input: { maxTaskChars: number },
  context: { home?: string } = {},
): { task: string; dir: string } => {
  const home = context.home ?? homedir();
  const dir = home && (run.cwd === home || run.cwd.startsWith(`${home}${sep}`)) ? `~${run.cwd.slice(home.length)}` : run.cwd;
  return { task: run.task ? cut(run.task, input.maxTaskChars) : '-', dir };
};

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';

/** the head keeps this share of the budget; the tail (where errors and summaries land) keeps the rest */
const HEAD_SHARE = 0.6;

/** a cut moves to a line boundary only if that keeps at least this share of its side's budget */
const MIN_SHARE_AT_LINE_BOUNDARY = 0.5;

/** spill files hold raw tool output (file contents, command output): only their owner may read them */
const SPILL_FILE_MODE = 0o600;
const SPILL_DIR_MODE = 0o700;

/** .what = how many line breaks text[start, end) holds */
const countBreaks = (text: string, start: number, end: number): number => {
  let count = 0;
  for (let index = text.indexOf('\n', start); index !== -1 && index < end; index = text.indexOf('\n', index + 1)) count++;
  return count;
};

/** .what = a name safe for a file: tool names and call ids come from the model and the supplier */
const safeName = (text: string): string => text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100) || 'unnamed';

/** .what = a count with thousands separators */
const formatCount = (count: number): string => count.toLocaleString('en-US');

/**
 * .what = the one truncation policy for every tool result: over maxChars, keep the head (~60%) and the tail (~40%),
 *         cut at line boundaries, spill the full output to <spillDir>/<toolName>-<callId>.txt (mode 0600, directories
 *         created 0700) and say how to page it
 * .why = a huge result would crowd the context; the model still sees both ends and can read the rest on demand
 * .note = the returned output is at most maxChars plus the notice (the notice block includes its two line breaks), plus
 *         the length of a `[redacted:NAME]` marker on each side of the cut when a secret's piece was replaced there
 */
export const truncateToolOutput = async (input: {
  output: string;
  maxChars: number;
  spillDir: string;
  callId: string;
  toolName: string;
  /** when given, secrets are replaced before the output is measured, cut or spilled, and their pieces at each cut */
  redact?: SecretRedactor;
}): Promise<{ output: string; truncated: boolean; fullOutputPath?: string }> => {
  const { redact } = input;
  const output = redact ? redact(input.output) : input.output;
  if (output.length <= input.maxChars) return { output, truncated: false };
  const budget = Number.isFinite(input.maxChars) ? Math.max(0, Math.floor(input.maxChars)) : 0;
  const headBudget = Math.floor(budget * HEAD_SHARE);
  const tailBudget = budget - headBudget;

  // the head ends after a line break, the tail starts after one, when that does not waste too much of the budget
  let headEnd = headBudget;
  const lastBreak = output.lastIndexOf('\n', headBudget - 1);
  if (headBudget > 0 && lastBreak !== -1 && lastBreak + 1 >= headBudget * MIN_SHARE_AT_LINE_BOUNDARY) headEnd = lastBreak + 1;
  else if (/[\uD800-\uDBFF]/.test(output[headEnd - 1] ?? '')) headEnd -= 1;
  let tailStart = output.length - tailBudget;
  if (tailStart > 0 && output[tailStart - 1] !== '\n') {
    const nextBreak = output.indexOf('\n', tailStart);
    if (nextBreak !== -1 && output.length - (nextBreak + 1) >= tailBudget * MIN_SHARE_AT_LINE_BOUNDARY) tailStart = nextBreak + 1;
    else if (/[\uDC00-\uDFFF]/.test(output[tailStart] ?? '')) tailStart += 1;
  }
  // a secret split by a cut leaves pieces that no longer match its value: they are replaced on each side of the cut
  const head = redact ? redact.head(output.slice(0, headEnd)) : output.slice(0, headEnd);
  const tail = tailBudget > 0 ? (redact ? redact.tail(output.slice(tailStart)) : output.slice(tailStart)) : '';

  // which lines of the full output were left out, so the model can page exactly them
  const totalLines = countBreaks(output, 0, output.length) + (output.endsWith('\n') ? 0 : 1);
  const firstOmittedLine = countBreaks(output, 0, headEnd) + 1;
  const tailLine = countBreaks(output, 0, tailStart) + 1;
  const lastOmittedLine = tail === '' || output[tailStart - 1] === '\n' ? tailLine - 1 : tailLine;
  const omitted =
    lastOmittedLine > firstOmittedLine
      ? `lines ${formatCount(firstOmittedLine)}–${formatCount(lastOmittedLine)} were left out`
      : `the left-out part is within line ${formatCount(firstOmittedLine)}`;
  const pageLimit = Math.min(2_000, Math.max(1, lastOmittedLine - firstOmittedLine + 1));

  const fullOutputPath = join(input.spillDir, `${safeName(input.toolName)}-${safeName(input.callId)}.txt`);
  const saved = await mkdir(input.spillDir, { recursive: true, mode: SPILL_DIR_MODE })
    .then(() => writeFile(fullOutputPath, output, { encoding: 'utf8', mode: SPILL_FILE_MODE }))
    .then(() => null)
    .catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  const where =
    saved === null
      ? `the full output is at ${fullOutputPath}: page it with read { path: "${fullOutputPath}", offset: ${firstOmittedLine}, limit: ${pageLimit} }`
      : `the full output could not be saved (${saved})`;
  const notice = `\n[… truncated: showed the first ${formatCount(head.length)} and last ${formatCount(tail.length)} of ${formatCount(output.length)} characters (${formatCount(totalLines)} lines); ${omitted}. ${where[0].toUpperCase()}${where.slice(1)}, or narrow the request (grep a pattern, a more specific glob, head/tail in bash) …]\n`;
  return {
    output: head + notice + tail,
    truncated: true,
    ...(saved === null ? { fullOutputPath } : {}),
  };
};

import { fstatSync } from 'node:fs';

import { BadRequestError } from '../core/contract/errors.js';

/** how long a pipe on stdin may stay silent before a run with a prompt goes on without it (Claude Code waits 3 s too) */
export const STDIN_FIRST_BYTE_WAIT_MS = 3_000;

/** .what = whether fd 0 is a pipe or socket, which may stay open and silent; a file or /dev/null ends at once */
const isStreamLike = (fd: number): boolean => {
  try {
    const stats = fstatSync(fd);
    return stats.isFIFO() || stats.isSocket();
  } catch {
    return true;
  }
};

/**
 * .what = reads stdin to its end; when firstByteWaitMs is given and nothing arrives by then, stops and says so
 * .why = an open pipe that never writes (a CI runner's stdin) must not hang a run that already has its task
 */
const readStdin = (stdin: NodeJS.ReadStream, firstByteWaitMs: number | null, onSilent: () => void): Promise<string | null> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer =
      firstByteWaitMs === null
        ? setTimeout(onSilent, STDIN_FIRST_BYTE_WAIT_MS)
        : setTimeout(() => {
            stdin.destroy();
            resolve(null);
          }, firstByteWaitMs);
    stdin.on('data', (chunk: Buffer) => {
      clearTimeout(timer);
      chunks.push(chunk);
    });
    stdin.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    stdin.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });

/**
 * .what = the task of a run, from a prompt (the arguments, or --input) and stdin:
 *         - a prompt and piped stdin: the prompt is the instruction and stdin is added after it, in a <stdin> block;
 *         - a prompt alone (stdin a terminal, empty, or a pipe silent for 3 s): the prompt;
 *         - no prompt: stdin is the task, read to its end (a notice after 3 s of silence says what is awaited).
 * .why = `git diff | bhrain ask "review this diff"` must send the diff, as claude -p, codex exec and qwen do
 */
export const readSkillInput = async (
  input: { skill: 'act' | 'ask'; flag: string | undefined; args: readonly string[]; stdin: NodeJS.ReadStream },
  context: { warn: (message: string) => void },
): Promise<string> => {
  if (input.flag !== undefined && input.args.length)
    throw new BadRequestError('the task was given twice, as an argument and with --input: give it once');
  const prompt = input.flag ?? (input.args.length ? input.args.join(' ') : undefined);
  if (input.stdin.isTTY) {
    if (prompt === undefined)
      throw new BadRequestError(
        `missing input: give the task as an argument (${input.skill === 'act' ? 'bhrain act "fix the build"' : 'bhrain ask "where is the retry policy?"'}), with --input, or on stdin`,
      );
    return prompt;
  }
  if (prompt === undefined)
    return (await readStdin(input.stdin, null, () =>
      context.warn('waiting for the task on stdin: give it as an argument or with --input instead, or pipe it in'),
    ))!;
  const piped = await readStdin(input.stdin, isStreamLike(0) ? STDIN_FIRST_BYTE_WAIT_MS : null, () => {});
  if (piped === null) {
    context.warn(
      `nothing arrived on stdin within ${STDIN_FIRST_BYTE_WAIT_MS / 1000} s: going on without it (redirect stdin from /dev/null to skip the wait)`,
    );
    return prompt;
  }
  return piped.trim() ? `${prompt}\n\n<stdin>\n${piped.replace(/\n$/, '')}\n</stdin>` : prompt;
};

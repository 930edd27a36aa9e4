import { BadRequestError } from '../contract/errors.js';

/**
 * .what = the task: --input when given, else everything piped on stdin
 * .why = `echo task | bhrain act` works in pipes; an interactive run without input fails fast instead of waiting
 */
export const readSkillInput = async (input: { flag: string | undefined; stdin: NodeJS.ReadStream }): Promise<string> => {
  if (input.flag !== undefined) return input.flag;
  if (input.stdin.isTTY)
    throw new BadRequestError('missing input: pass the task with --input "..." or pipe it on stdin (echo "task" | bhrain act --atom qwen)');
  const chunks: Buffer[] = [];
  for await (const chunk of input.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

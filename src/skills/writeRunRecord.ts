import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * .what = writes a run's record under .log/bhrain/<skill>/<timestamp>/: input, output, refs, metrics, transcript
 * .why = every CI run leaves an audit trail beside the work it did, readable without bhrain
 */
export const writeRunRecord = async (input: {
  cwd: string;
  skill: string;
  prompt: string;
  output: string;
  refs: Record<string, unknown>;
  metrics: Record<string, unknown>;
  transcript: unknown;
  /** removes secret values from everything written */
  redact: (text: string) => string;
}): Promise<string> => {
  const stamp = `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
  const dir = join(input.cwd, '.log', 'bhrain', input.skill, stamp);
  await mkdir(dir, { recursive: true });
  const write = (name: string, text: string) => writeFile(join(dir, name), input.redact(text));
  await Promise.all([
    write('input.md', input.prompt),
    write('output.md', input.output),
    write('refs.json', `${JSON.stringify(input.refs, null, 2)}\n`),
    write('metrics.json', `${JSON.stringify(input.metrics, null, 2)}\n`),
    write('transcript.json', `${JSON.stringify(input.transcript, null, 2)}\n`),
  ]);
  return dir;
};

// every output of a run is a sink of its one typed stream: a new output is one sink, added without touching the run
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { runSkillHosted } from '../../src/cli/runSkill.js';
import type { RunSink } from '../../src/cli/run/RunSink.js';
import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();
afterEach(() => vi.unstubAllEnvs());

/** whether a request is the subagent's: its first user message is the task's prompt */
const isChild = (request: StandinRequest) => JSON.stringify(request.body.messages[0]).includes('find where greet is defined');

/** the parent writes a file, delegates a search to an explore subagent (which greps), then answers */
const respond = (request: StandinRequest) => {
  const said = JSON.stringify(request.body.messages);
  if (isChild(request))
    return said.includes('tool_result') ? { text: 'in greet.ts' } : { toolCalls: [{ name: 'grep', input: { pattern: 'greet' } }] };
  if (said.includes('in greet.ts')) return { text: 'greet is in greet.ts; notes.md is written.' };
  if (said.includes('tool_result'))
    return {
      toolCalls: [{ name: 'task', input: { description: 'find greet', prompt: 'find where greet is defined', subagent_type: 'explore' } }],
    };
  return { toolCalls: [{ name: 'write', input: { path: 'notes.md', content: 'notes\n' } }] };
};

/** a repository with one source file, and the environment a CLI run gets (the stand-in's URLs, a private home) */
const genRepo = async () => {
  const base = tempDir('bhrain-sinks-');
  const repo = join(base, 'repo');
  execFileSync('git', ['init', '-q', repo]);
  await writeFile(join(repo, 'greet.ts'), 'export const greet = () => "hi";\n');
  return { repo, env: genCliEnv({ standin: standin(), home: join(base, 'home') }) };
};

describe('run sinks', () => {
  it('a new output added as one sink sees every event of the run (its session in the order stream-json writes them, its subagent’s own), its start, its end and its close', async () => {
    // the CLI's own stream-json output of the run: the session's events, in order
    const cli = await genRepo();
    standin().respond = respond;
    const run = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '-o', 'stream-json', 'go'],
      cwd: cli.repo,
      env: cli.env,
    });
    expect(run.code).toBe(0);
    const written = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    const streamed = written.filter((event) => !['start', 'result'].includes(event.type)).map((event) => `session ${event.type}`);

    // the same run, with one more output: the whole sink is these lines
    const seen: string[] = [];
    const sink: RunSink = {
      name: 'a new output',
      onStart: (start) => void seen.push(`start ${start.atom}`),
      onEvent: (event, origin) => void seen.push(`${origin} ${event.type}`),
      onEnd: (end) => void seen.push(`end ${end.exitCode} ${end.termination}`),
      close: (exitCode) => void seen.push(`close ${exitCode}`),
    };
    const hosted = await genRepo();
    for (const [name, value] of Object.entries(hosted.env)) vi.stubEnv(name, value);
    standin().reset();
    standin().respond = respond;
    const result = await runSkillHosted(
      'act',
      { arch: 'bhrain.struct.v1', output: 'json', record: true, quiet: true },
      { atom: 'claude/haiku', sandbox: 'off' },
      {
        cwd: hosted.repo,
        prompt: 'go',
        signal: new AbortController().signal,
        sink,
      },
    );

    expect(result).toMatchObject({ exitCode: 0, output: 'greet is in greet.ts; notes.md is written.' });
    expect(seen[0]).toBe('start claude/haiku');
    expect(seen.slice(-2)).toEqual(['end 0 complete', 'close 0']);
    expect(seen.filter((line) => line.startsWith('session '))).toEqual(streamed);
    expect(streamed).toEqual(expect.arrayContaining(['session ToolCallStarted', 'session SubagentStarted', 'session SessionCompleted']));
    // the subagent's own session: its tool call, its iterations, its end
    expect(seen.filter((line) => line.startsWith('subagent '))).toEqual(
      expect.arrayContaining([
        'subagent SessionStarted',
        'subagent ToolCallStarted',
        'subagent ToolExecutionCompleted',
        'subagent SessionCompleted',
      ]),
    );
  });
});

// docs/design/loop.md#subagents: `bhrain act` delegates through the task tool end to end, the built CLI as a child process
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin } = useStandin();

/** the tool names a request offered */
const toolsOf = (request: StandinRequest): string[] => (request.body.tools ?? []).map((tool: { name: string }) => tool.name);
/** whether a request is the child's: its first user message is the task's prompt */
const isChild = (request: StandinRequest): boolean => JSON.stringify(request.body.messages[0]).includes('find where greet is defined');

describe('subagents through bhrain act', () => {
  it('act offers task; an explore child runs in a fresh, read-only context; its answer comes back; stream-json shows it', async () => {
    const base = tempDir('bhrain-subagent-cli-');
    const repo = join(base, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    await writeFile(join(repo, 'greet.ts'), 'export const greet = () => "hi";\n');
    // the parent delegates once, then answers with what the child found; the child greps, then answers
    standin().respond = (request) => {
      if (isChild(request)) {
        const done = JSON.stringify(request.body.messages).includes('tool_result');
        return done ? { text: 'greet is defined in greet.ts, line 1' } : { toolCalls: [{ name: 'grep', input: { pattern: 'greet' } }] };
      }
      const delegated = JSON.stringify(request.body.messages).includes('greet is defined in greet.ts');
      return delegated
        ? { text: 'The explore subagent found greet in greet.ts.' }
        : {
            toolCalls: [
              { name: 'task', input: { description: 'find greet', prompt: 'find where greet is defined', subagent_type: 'explore' } },
            ],
          };
    };
    const run = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--input', 'the secret word is ostrich. Where is greet defined?', '-o', 'stream-json'],
      cwd: repo,
      env: genCliEnv({ standin: standin(), home: join(base, 'home') }),
    });
    expect(run.code).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.at(-1)).toMatchObject({ type: 'result', output: 'The explore subagent found greet in greet.ts.' });
    const started = events.find((event) => event.type === 'SubagentStarted');
    const completed = events.find((event) => event.type === 'SubagentCompleted');
    expect(started).toMatchObject({ subagentType: 'explore' });
    expect(completed).toMatchObject({ subagentType: 'explore', status: 'COMPLETED', sessionUuid: started.sessionUuid });
    // the end-of-run audit names the subagent, how it ended, and that nothing changed (git's store unwalked)
    expect(events.at(-1).audit.subagents).toEqual({
      items: [{ uuid: started.sessionUuid, type: 'explore', description: 'find greet', status: 'COMPLETED' }],
      omitted: 0,
    });
    expect(events.at(-1).audit.files).toMatchObject({
      created: { items: [] },
      changed: { items: [] },
      deleted: { items: [] },
      walked: true,
    });

    const requests = standin().requests;
    const parent = requests.filter((request) => !isChild(request));
    const child = requests.filter(isChild);
    expect(toolsOf(parent[0])).toContain('task');
    expect(child.length).toBe(2);
    // fresh context: the child never sees the parent's prompt; read-only: no write, edit, bash nor task
    for (const request of child) {
      expect(JSON.stringify(request.body.messages)).not.toContain('ostrich');
      expect(toolsOf(request).sort()).toEqual(['glob', 'grep', 'read', 'websearch']);
    }
    // the parent reads the child's answer as the tool result, and nothing of the child's own steps
    const last = JSON.stringify(parent.at(-1)!.body.messages);
    expect(last).toContain('greet is defined in greet.ts, line 1');
    expect(last).not.toContain('"name":"grep"');
  });

  it('--no-subagents: act offers no task tool', async () => {
    const base = tempDir('bhrain-subagent-cli-');
    standin().script({ text: 'ok' });
    const run = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--no-subagents', '--input', 'hi'],
      cwd: base,
      env: genCliEnv({ standin: standin(), home: join(base, 'home') }),
    });
    expect(run.code).toBe(0);
    expect(toolsOf(standin().requests[0])).not.toContain('task');
  });
});

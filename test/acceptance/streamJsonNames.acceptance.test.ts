// stream-json names what a run spent, and the tools it called, as the JSON result object does; the names they replaced
// are still written beside them for this schema version
import { describe, expect, it } from 'vitest';

import type { StandinRequest } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';
import { genCliEnv, runBhrain } from './runCli.js';

const { standin } = useStandin();

/** .what = the key paths of an object's leaves, sorted: { a: 1, b: { c: 2 } } → ['a', 'b.c'] */
const keyPathsOf = (value: unknown, prefix = ''): string[] =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.entries(value)
        .flatMap(([key, inner]) => keyPathsOf(inner, prefix ? `${prefix}.${key}` : key))
        .sort()
    : [prefix];

/** the parent delegates a listing to an explore subagent (which globs), then answers; the child's first message is its task */
const respondWithSubagent = (request: StandinRequest) => {
  const said = JSON.stringify(request.body.messages);
  if (JSON.stringify(request.body.messages[0]).includes('list the files here'))
    return said.includes('tool_result') ? { text: 'one file' } : { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] };
  if (said.includes('one file')) return { text: 'there is one file' };
  return { toolCalls: [{ name: 'task', input: { description: 'list', prompt: 'list the files here', subagent_type: 'explore' } }] };
};

describe('stream-json names what a run spent as the JSON result does', () => {
  it("every event's tokens and cost have the result's key paths; tool events name the tool as tool; the old names stay beside them", async () => {
    const cwd = tempDir('bhrain-stream-');
    standin().respond = respondWithSubagent;
    const run = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--sandbox', 'off', '-o', 'stream-json', 'go'],
      cwd,
      env: genCliEnv({ standin: standin(), home: tempDir('bhrain-home-') }),
    });
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const result = lines.at(-1);
    expect(result.type).toBe('result');
    const tokenPaths = keyPathsOf(result.metrics.tokens);
    const costPaths = keyPathsOf(result.metrics.cost);
    expect(tokenPaths).toEqual(['cache.get', 'cache.set', 'input', 'output']);
    expect(costPaths).toEqual(['usd']);

    const ofType = (type: string) => lines.filter((line) => line.type === type);
    const spent = [
      ...ofType('IterationCompleted'),
      ...ofType('SessionCompleted'),
      ...ofType('SubagentCompleted').map((line) => line.metrics),
    ];
    expect(ofType('SubagentCompleted')).toHaveLength(1);
    expect(spent.length).toBeGreaterThanOrEqual(4);
    for (const each of spent) {
      expect(keyPathsOf(each.tokens)).toEqual(tokenPaths);
      expect(keyPathsOf(each.cost)).toEqual(costPaths);
    }
    // the subagent's metrics are the result's metrics' shape
    expect(
      Object.keys(ofType('SubagentCompleted')[0].metrics)
        .filter((key) => key !== 'cash')
        .sort(),
    ).toEqual(Object.keys(result.metrics).sort());
    const session = ofType('SessionCompleted')[0];
    expect(session.tokens).toEqual(result.metrics.tokens);
    expect(session.cost).toEqual(result.metrics.cost);
    for (const call of [...ofType('ToolCallStarted'), ...ofType('ToolExecutionCompleted')]) expect(call.tool).toBe(call.toolName);

    // deprecated, for this schema version: the names they replace, saying the same
    const iteration = ofType('IterationCompleted')[0];
    expect(iteration.tokenUsage).toMatchObject({ inputTokens: iteration.tokens.input, outputTokens: iteration.tokens.output });
    expect(iteration.generation.costUsd).toBe(iteration.cost.usd);
    expect(session.cash.total).toBe(session.cost.usd);
  });
});

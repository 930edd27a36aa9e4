import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genRecordingLog, PROTOCOL_SLUGS, useStandin } from '../../../../test/standin/useStandin.js';
import type { BrainMessage } from '../../../contract/BrainMessage.js';
import { BadRequestError, ContextOverflowError, SupplierUnavailableError } from '../../../contract/errors.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain, invoke } from '../genBhrain.js';
import type { BhrainToolBox } from '../tools/BhrainToolBox.js';
import { genBashToolBox } from '../tools/bash/genBashToolBox.js';
import { genFilesToolBox } from '../tools/files/genFilesToolBox.js';
import { repairToolPairs } from './repairToolPairs.js';

const { standin, contextFor } = useStandin();
const tempDir = () => mkdtemp(join(tmpdir(), 'bhrain-loop-'));

/** a toolbox whose tools fail or throw on purpose, and one that records when it ran */
const genProbeToolBox = (): BhrainToolBox & { runs: string[] } => {
  const runs: string[] = [];
  return {
    name: 'probe',
    runs,
    definitions: [
      { name: 'ok', description: 'succeeds', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } },
      { name: 'fail', description: 'fails', inputSchema: { type: 'object', properties: {} } },
      { name: 'crash', description: 'throws', inputSchema: { type: 'object', properties: {} } },
      { name: 'slow', description: 'waits 300 ms', inputSchema: { type: 'object', properties: {} } },
    ],
    execute: async ({ call }) => {
      runs.push(call.name);
      if (call.name === 'crash') throw new Error('disk on fire');
      if (call.name === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
      return { callId: call.id, success: call.name !== 'fail', output: call.name === 'fail' ? 'it failed: no such thing' : `ok ${call.input.n ?? ''}`.trim() };
    },
  };
};

describe.each(PROTOCOL_SLUGS)('bhrain.struct.v1 loop on $slug ($protocol protocol)', ({ slug }) => {
  it('usecase.1: a simple input gets a text response with no tool calls', async () => {
    standin().script({ text: 'Paris is the capital of France.' });
    const result = await invoke({ config: { atom: slug }, prompt: 'capital of France?' }, contextFor());
    expect(result.output).toBe('Paris is the capital of France.');
    expect(result.termination).toBe('complete');
    expect(result.iterations).toBe(1);
    expect(result.transcript.filter((message) => message.role === 'tool')).toHaveLength(0);
    expect(standin().requests).toHaveLength(1);
  });

  it('usecase.1: an input needing tools gets valid tool calls, and the answer waits for their results', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 'version.txt'), '4.2.0\n');
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'version.txt' } }] }, { text: 'The version is 4.2.0.' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [genFilesToolBox()] }, prompt: 'which version?' }, contextFor({ cwd }));
    expect(result.output).toBe('The version is 4.2.0.');
    expect(result.iterations).toBe(2);
    const second = JSON.stringify(standin().requests[1].body.messages);
    expect(second).toContain('4.2.0');
  });

  it('usecase.2: the loop iterates until a response has no tool calls, running every call of a response', async () => {
    const cwd = await tempDir();
    standin().script(
      { toolCalls: [{ name: 'bash', input: { command: 'echo one > a.txt' } }, { name: 'bash', input: { command: 'echo two > b.txt' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt b.txt' } }] },
      { text: 'Both files exist: one, two.' },
    );
    const result = await invoke({ config: { atom: slug, toolBoxes: [genBashToolBox()] }, prompt: 'make two files' }, contextFor({ cwd }));
    expect(result.termination).toBe('complete');
    expect(result.iterations).toBe(3);
    expect(await readFile(join(cwd, 'b.txt'), 'utf8')).toBe('two\n');
    const results = result.transcript.filter((message): message is Extract<BrainMessage, { role: 'tool' }> => message.role === 'tool');
    expect(results).toHaveLength(3);
    expect(results[2].content).toContain('one\ntwo');
  });

  it('usecase.2: at maxIterations the loop stops gracefully with the partial answer and an explanation', async () => {
    const probe = genProbeToolBox();
    standin().script(
      { text: 'step one done', toolCalls: [{ name: 'ok', input: { n: 1 } }] },
      { text: 'step two done', toolCalls: [{ name: 'ok', input: { n: 2 } }] },
    );
    const result = await invoke({ config: { atom: slug, toolBoxes: [probe], maxIterations: 2 }, prompt: 'do many steps' }, contextFor());
    expect(result.termination).toBe('max-iterations');
    expect(result.iterations).toBe(2);
    expect(result.output).toMatch(/^step two done\n\n\[bhrain stopped after 2 iterations \(maxIterations\)/);
    expect(standin().requests).toHaveLength(2);
    expect(probe.runs).toEqual(['ok', 'ok']);
  });

  it('usecase.10: malformed tool arguments become an error result, and the model retries', async () => {
    const probe = genProbeToolBox();
    standin().script(
      { toolCalls: [{ name: 'ok', rawArguments: '{"n": 1,' }] },
      { toolCalls: [{ name: 'ok', input: { n: 'one' } }] },
      { toolCalls: [{ name: 'ok', input: { n: 1 } }] },
      { text: 'done' },
    );
    const result = await invoke({ config: { atom: slug, toolBoxes: [probe] }, prompt: 'go' }, contextFor());
    expect(result.output).toBe('done');
    expect(probe.runs).toEqual(['ok']);
    const errors = result.transcript.filter((message) => message.role === 'tool' && message.isError).map((message) => message.content);
    expect(errors[0]).toMatch(/not valid JSON/);
    expect(errors[1]).toMatch(/input\.n must be integer, got string/);
  });

  it('usecase.12: a throwing tool becomes an error result with its message, and the loop goes on', async () => {
    standin().script({ toolCalls: [{ name: 'crash' }] }, { text: 'the tool crashed: disk on fire' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [genProbeToolBox()] }, prompt: 'go' }, contextFor());
    expect(result.termination).toBe('complete');
    const toolResult = result.transcript.find((message) => message.role === 'tool');
    expect(toolResult).toMatchObject({ isError: true, content: 'tool crash failed with an unexpected error: disk on fire' });
  });

  it('usecase.12: llm errors are retried; when retries fail the error is surfaced with the partial transcript', async () => {
    standin().script({ error: { status: 529 } }, { text: 'checking', toolCalls: [{ name: 'ok' }] }, { error: { status: 500 } }, { error: { status: 500 } }, { error: { status: 500 } });
    const result = await invoke({ config: { atom: slug, toolBoxes: [genProbeToolBox()] }, prompt: 'go' }, contextFor());
    expect(result.termination).toBe('error');
    expect(result.error).toBeInstanceOf(SupplierUnavailableError);
    expect(result.error?.message).toMatch(/failed 3 times in a row/);
    expect(result.iterations).toBe(1);
    expect(result.output).toBe('checking');
    expect(result.transcript.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('usecase.12: invalid input (a bad config) is a clear error and no loop starts', async () => {
    expect(() => genBhrain({ atom: slug, maxIterations: 0 })).toThrow(/maxIterations/);
    expect(() => genBhrain({ atom: 'gpt-9' })).toThrow(/unknown atom 'gpt-9'/);
    expect(() => genBhrain({ atom: slug, toolBoxes: [{ name: 'x', definitions: [], execute: 'no' as never }] })).toThrow(BadRequestError);
    expect(standin().requests).toHaveLength(0);
  });

  it('usecase.13: tool calls and results are logged, iterations and context tokens tracked, totals reported', async () => {
    const { lines, log } = genRecordingLog();
    const events: BhrainEvent[] = [];
    standin().script({ toolCalls: [{ name: 'ok', input: { n: 7 } }] }, { text: 'seven' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [genProbeToolBox()] }, prompt: 'go' }, contextFor({ log, onEvent: (event) => events.push(event) }));
    expect(lines.find((line) => line.message === 'tool call ok')?.meta).toMatchObject({ input: { n: 7 } });
    expect(lines.find((line) => line.message.startsWith('tool result ok'))?.meta).toMatchObject({ output: 'ok 7', success: true });
    const iterations = events.filter((event) => event.type === 'IterationCompleted');
    expect(iterations.map((event) => event.iterationNumber)).toEqual([1, 2]);
    expect(iterations.every((event) => event.contextTokens > 0)).toBe(true);
    expect(events.find((event) => event.type === 'ToolExecutionCompleted')).toMatchObject({ toolName: 'ok', success: true });
    expect(result.iterations).toBe(2);
    expect(result.tokens.output).toBeGreaterThan(0);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(result.cash?.total).toBeGreaterThan(0);
    expect(lines.at(-1)?.message).toBe('session complete after 2 iterations');
  });

  it('boundary.1: an empty input gets a clarification request and no loop', async () => {
    const result = await invoke({ config: { atom: slug }, prompt: '   ' }, contextFor());
    expect(result.termination).toBe('clarification');
    expect(result.output).toMatch(/What would you like me to do\?/);
    expect(standin().requests).toHaveLength(0);
  });

  it('boundary.2: an input larger than the context window fails before execution, naming the limit', async () => {
    const run = invoke({ config: { atom: slug, limits: { contextTokens: 2_000 } }, prompt: 'x'.repeat(20_000) }, contextFor());
    await expect(run).rejects.toThrow(ContextOverflowError);
    await expect(run).rejects.toThrow(/more than the context window of 2000 tokens/);
    expect(standin().requests).toHaveLength(0);
  });

  it('boundary.4: parallel calls run concurrently; successes and failures are all appended', async () => {
    const probe = genProbeToolBox();
    standin().script({ toolCalls: [{ name: 'slow' }, { name: 'slow' }, { name: 'fail' }, { name: 'crash' }, { name: 'ok', input: { n: 3 } }] }, { text: 'partial success' });
    const started = Date.now();
    const result = await invoke({ config: { atom: slug, toolBoxes: [probe] }, prompt: 'go' }, contextFor());
    expect(Date.now() - started).toBeLessThan(590);
    const results = result.transcript.filter((message): message is Extract<BrainMessage, { role: 'tool' }> => message.role === 'tool');
    expect(results.map((message) => [message.toolName, message.isError])).toEqual([
      ['slow', false],
      ['slow', false],
      ['fail', true],
      ['crash', true],
      ['ok', false],
    ]);
    expect(JSON.stringify(standin().requests[1].body)).toContain('it failed: no such thing');
  });

  it('boundary.5: a call to a non-existent tool returns an error listing the tools, and the model corrects', async () => {
    standin().script({ toolCalls: [{ name: 'search_files', input: { q: 'x' } }] }, { toolCalls: [{ name: 'ok', input: { n: 1 } }] }, { text: 'fixed' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [genProbeToolBox()] }, prompt: 'go' }, contextFor());
    expect(result.output).toBe('fixed');
    expect(result.transcript.find((message) => message.role === 'tool')?.content).toBe(
      "tool not found: 'search_files'. Available tools: ok, fail, crash, slow. Call one of these instead.",
    );
  });

  it('tells the model when it calls the same tool with the same arguments three times in a row', async () => {
    standin().script(...[1, 2, 3].map(() => ({ toolCalls: [{ name: 'ok', input: { n: 1 } }] })), { text: 'stopping' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [genProbeToolBox()] }, prompt: 'go' }, contextFor());
    const results = result.transcript.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(results[1]).not.toMatch(/call \d in a row/);
    expect(results[2]).toMatch(/this is call 3 in a row to ok with the same arguments/);
  });

  it('repairs a history whose tool call has no result before sending it', async () => {
    standin().script({ text: 'continuing' });
    const history: BrainMessage[] = [
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_lost', name: 'ok', input: {} }] },
    ];
    const result = await genBhrain({ atom: slug, toolBoxes: [genProbeToolBox()] }).invoke({ prompt: 'go on', history }, contextFor());
    expect(result.output).toBe('continuing');
    expect(JSON.stringify(standin().requests[0].body.messages)).toContain('this call was interrupted before it returned');
  });
});

describe('usecase.10: atom interchangeability', () => {
  it('the loop behaves identically on claude and qwen for the same script', async () => {
    const runs = [];
    for (const { slug } of PROTOCOL_SLUGS) {
      standin().reset();
      standin().script({ toolCalls: [{ name: 'ok', input: { n: 1 } }, { name: 'fail' }] }, { toolCalls: [{ name: 'nope' }] }, { text: 'done' });
      const result = await invoke({ config: { atom: slug, toolBoxes: [genProbeToolBox()] }, prompt: 'go' }, contextFor());
      runs.push({
        termination: result.termination,
        iterations: result.iterations,
        transcript: result.transcript.map((message) => [message.role, message.content, message.role === 'tool' ? message.isError : null]),
      });
      expect(standin().requests.every((request) => request.protocol === (slug.startsWith('claude') ? 'anthropic' : 'openai'))).toBe(true);
    }
    expect(runs[0]).toEqual(runs[1]);
  });
});

describe('repairToolPairs', () => {
  it('answers unanswered calls and drops results whose call is gone', () => {
    const repaired = repairToolPairs([
      { role: 'tool', toolCallId: 'orphan', toolName: 'ok', content: 'x', isError: false },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'ok', input: {} }, { id: 'b', name: 'ok', input: {} }] },
      { role: 'tool', toolCallId: 'b', toolName: 'ok', content: 'done', isError: false },
      { role: 'user', content: 'next' },
    ]);
    expect(repaired.map((message) => (message.role === 'tool' ? `tool:${message.toolCallId}` : message.role))).toEqual([
      'user',
      'assistant',
      'tool:b',
      'tool:a',
      'user',
    ]);
  });
});

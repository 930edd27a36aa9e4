// reasoning, end to end: the built CLI with --thinking against recorded-shape streams served byte for byte
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse, openaiChunks, openaiSse, startRawReplay, type RawReplay } from '#standin/rawReplay.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { tempDir } from '#test-helpers/fs.js';

let server: RawReplay;
beforeAll(async () => {
  server = await startRawReplay();
});
afterAll(async () => server.close());
let home: string;
let cwd: string;
beforeEach(async () => {
  server.reset();
  home = tempDir('bhrain-home-');
  cwd = tempDir('bhrain-think-');
  await writeFile(join(cwd, 'a.ts'), 'export const a = 1;\n');
});
const envFor = () => genCliEnv({ standin: server, home });

const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+Kc2LiXgxdAUdeUiWRLiQ2yzWQ0Wb3WfYbuQX3QEB8qXgd7SRYBQ==';
const thinkingThenRead = anthropicSse(
  anthropicMessageEvents({
    content: [
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'THOUGHT: read a.ts first.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_read1', name: 'read', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":"a.ts"}' } },
      { type: 'content_block_stop', index: 1 },
    ],
    stopReason: 'tool_use',
  }),
);
const claudeText = (text: string) =>
  anthropicSse(
    anthropicMessageEvents({
      content: [
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
        { type: 'content_block_stop', index: 0 },
      ],
      stopReason: 'end_turn',
    }),
  );

describe('reasoning: --thinking enables claude extended thinking, and the signed blocks go back with the tool results', () => {
  it('bhrain ask --thinking 2048: thinking enabled on the wire; the next request sends the signed thinking block before the tool_use; the answer holds no thinking', async () => {
    server.replay(thinkingThenRead, claudeText('a.ts exports a = 1.'));
    const run = await runBhrain({
      args: ['ask', '--atom', 'claude/haiku', '--thinking', '2048', 'what does a.ts export?'],
      cwd,
      env: envFor(),
    });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('a.ts exports a = 1.\n');
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((request) => request.body as any);
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const assistant = second.messages.find((message: any) => message.role === 'assistant');
    expect(assistant.content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: 'THOUGHT: read a.ts first.', signature: SIGNATURE },
      { type: 'tool_use', id: 'toolu_read1', name: 'read', input: { path: 'a.ts' } },
    ]);
  });

  it('--thinking off and no flag send no thinking field', async () => {
    server.replay(claudeText('ok'));
    const run = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', '--thinking', 'off', 'hi'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect((server.requests[0].body as any).thinking).toBeUndefined();
  });

  it('--thinking lots and --thinking 100 (claude) are bad requests (exit 2) naming the flag, before any request', async () => {
    const word = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', '--thinking', 'lots', 'hi'], cwd, env: envFor() });
    expect(word.code).toBe(2);
    expect(word.stderr).toMatch(/--thinking 'lots' is not a thinking budget/);
    const small = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', '--thinking', '100', 'hi'], cwd, env: envFor() });
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/at least 1024/);
    expect(server.requests).toHaveLength(0);
  });

  it('qwen: a reasoning_content turn with a tool call is sent back on the next request; stdout is the answer only', async () => {
    server.replay(
      openaiSse(
        openaiChunks({
          deltas: [
            { reasoning_content: 'THOUGHT: read it.' },
            { tool_calls: [{ index: 0, id: 'call_r1', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } }] },
          ],
          finishReason: 'tool_calls',
        }),
      ),
      openaiSse(openaiChunks({ deltas: [{ content: '<think>\nSECOND THOUGHT\n</think>\n\nIt exports a.' }], finishReason: 'stop' })),
    );
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', 'what does a.ts export?'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('It exports a.\n');
    const assistant = (server.requests[1].body as any).messages.find((message: any) => message.role === 'assistant');
    expect(assistant).toMatchObject({ reasoning_content: 'THOUGHT: read it.', tool_calls: [{ id: 'call_r1' }] });
  });

  it('-o stream-json --include-partial: reasoning streams as ReasoningDelta events, the answer alone as TextDelta events', async () => {
    server.replay(
      openaiSse(
        openaiChunks({
          deltas: [{ reasoning_content: 'THOUGHT one. ' }, { reasoning_content: 'THOUGHT two.' }, { content: 'The answer.' }],
          finishReason: 'stop',
        }),
      ),
    );
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'stream-json', '--include-partial', 'q?'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(events.filter((event) => event.type === 'ReasoningDelta').map((event) => event.text)).toEqual(['THOUGHT one. ', 'THOUGHT two.']);
    expect(
      events
        .filter((event) => event.type === 'TextDelta')
        .map((event) => event.text)
        .join(''),
    ).toBe('The answer.');
    expect(events[events.length - 1]).toMatchObject({ type: 'result', output: 'The answer.' });
  });

  it('-o stream-json without --include-partial has no ReasoningDelta events', async () => {
    server.replay(openaiSse(openaiChunks({ deltas: [{ reasoning_content: 'THOUGHT' }, { content: 'A.' }], finishReason: 'stop' })));
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'stream-json', 'q?'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('THOUGHT');
  });
});

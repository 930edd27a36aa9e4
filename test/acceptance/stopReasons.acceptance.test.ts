// stop reasons, end to end: the built CLI against recorded-shape streams served byte for byte
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse, openaiChunks, openaiSse, startRawReplay, type RawReplay } from '#standin/rawReplay.js';
import { expectValidOutput } from './outputSchema.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { exists, tempDir } from '#test-helpers/fs.js';

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
  cwd = tempDir('bhrain-stop-');
});
const envFor = () => genCliEnv({ standin: server, home });

const claudeText = (text: string, stopReason: string) =>
  anthropicSse(
    anthropicMessageEvents({
      content: [
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        ...(text ? [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }] : []),
        { type: 'content_block_stop', index: 0 },
      ],
      stopReason,
    }),
  );
const qwenText = (text: string) => openaiSse(openaiChunks({ deltas: [{ content: text }], finishReason: 'stop' }));

/** the text of the last message of a recorded request, whatever the protocol */
const lastMessageText = (body: any): string => JSON.stringify(body.messages[body.messages.length - 1]);

describe('refusals: a refusal exits 9 and prints the refusal text, never retried', () => {
  it('claude stop_reason refusal: the refusal text on stdout, exit 9, one request', async () => {
    server.replay(claudeText('I cannot help with creating that.', 'refusal'));
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', 'do the forbidden thing'], cwd, env: envFor() });
    expect(run.code).toBe(9);
    expect(run.stdout).toBe('I cannot help with creating that.\n');
    expect(run.stderr).not.toMatch(/empty answer/);
    expect(server.requests).toHaveLength(1);
  });

  it('a refusal with no text says so, exits 9, and is not retried as an empty answer', async () => {
    server.replay(claudeText('', 'refusal'));
    const run = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', 'do the forbidden thing'], cwd, env: envFor() });
    expect(run.code).toBe(9);
    expect(run.stdout).toBe('[claude/haiku refused the request (stop reason refusal) and gave no text]\n');
    expect(run.stderr).not.toMatch(/empty answer/);
    expect(server.requests).toHaveLength(1);
  });

  it('qwen delta.refusal under -o json: termination "refusal", exitCode 9, output the refusal text', async () => {
    server.replay(openaiSse(openaiChunks({ deltas: [{ refusal: "I'm sorry, I can't assist with that." }], finishReason: 'stop' })));
    const run = await runBhrain({ args: ['ask', '--atom', 'qwen', '-o', 'json', 'do the forbidden thing'], cwd, env: envFor() });
    expect(run.code).toBe(9);
    const lines = run.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0]);
    expectValidOutput(result);
    expect(result).toMatchObject({
      type: 'result',
      termination: 'refusal',
      exitCode: 9,
      output: "I'm sorry, I can't assist with that.",
      error: null,
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe('cut-off calls: a write cut by the output-token limit is not run; the model is told to continue in smaller steps', () => {
  it('claude: a max_tokens write is not run, and the next request says it was cut off by the output limit', async () => {
    const cut = anthropicSse(
      anthropicMessageEvents({
        content: [
          { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_big', name: 'write', input: {} } },
          {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'input_json_delta', partial_json: '{"path": "big.txt", "content": "part one\\npart tw' },
          },
          { type: 'content_block_stop', index: 0 },
        ],
        stopReason: 'max_tokens',
      }),
    );
    server.replay(cut, claudeText('I will write it in parts next time.', 'end_turn'));
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', 'write big.txt'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(await exists(join(cwd, 'big.txt'))).toBe(false);
    expect(server.requests).toHaveLength(2);
    const told = lastMessageText(server.requests[1].body);
    expect(told).toMatch(/cut off by the output-token limit and was not run/);
    expect(told).toMatch(/smaller steps/);
    expect(told).toMatch(/write a big file in parts/);
    expect(told).not.toMatch(/not valid JSON/);
    // the half call never reached the transcript as a call: no tool_use without a result is sent back
    expect(JSON.stringify(server.requests[1].body)).not.toContain('toolu_big');
  });

  it('qwen: a finish_reason length write is not run, and the next request tells the model to continue in smaller steps', async () => {
    const cut = openaiSse(
      openaiChunks({
        deltas: [
          { tool_calls: [{ index: 0, id: 'call_big', type: 'function', function: { name: 'write', arguments: '' } }] },
          { tool_calls: [{ index: 0, function: { arguments: '{"path": "big.txt", "content": "part one\\npart tw' } }] },
        ],
        finishReason: 'length',
      }),
    );
    server.replay(cut, qwenText('Understood, in parts.'));
    const run = await runBhrain({ args: ['act', '--atom', 'qwen', 'write big.txt'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(await exists(join(cwd, 'big.txt'))).toBe(false);
    const told = lastMessageText(server.requests[1].body);
    expect(told).toMatch(/your last tool call \(write, \d+ characters of arguments received\) was cut off by the output-token limit/);
    expect(told).toMatch(/smaller steps/);
  });
});

describe('stop reasons: pause_turn continues the turn', () => {
  it('claude pause_turn: the paused content is sent back as the last (assistant) turn and the model continues', async () => {
    server.replay(claudeText('Still searching. ', 'pause_turn'), claudeText('Found it: 42.', 'end_turn'));
    const run = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', 'find the answer'], cwd, env: envFor() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Found it: 42.\n');
    const messages = server.requests[1].body.messages;
    expect(messages[messages.length - 1]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Still searching.' }] });
  });
});

// Recorded-shape streams replayed byte for byte through the real SDKs: wire fidelity of both protocols
// The shapes are written from what public suites assert: vLLM's and SGLang's qwen3-coder / hermes tool-parser tests,
// qwen-code's streaming tool-call parser tests, the openai-node and anthropic-sdk-typescript streaming fixtures, and the
// SSE framing rules those SDKs' decoders follow (CRLF, comments, `data:` without a space, [DONE], ping, error events)
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { beforeEach, describe, expect, it } from 'vitest';

import { anthropicMessageEvents, anthropicSse, openaiChunks, openaiSse } from '#standin/rawReplay.js';
import { useRawReplay } from '#standin/useRawReplay.js';
import { nodeHttpFetch } from './transport/nodeHttpFetch.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { genBrainAtom } from './genBrainAtom.js';

const { replayer, contextFor } = useRawReplay();

/** .what = the fetches the SDKs read a wire through: their own (a library caller's) and the CLI's (context.fetch) */
const FETCHES = [
  { name: "the SDK's own fetch", fetch: undefined },
  { name: "the CLI's nodeHttpFetch", fetch: nodeHttpFetch },
];
let fetchUnderTest: typeof globalThis.fetch | undefined;
/** .what = a describe run once per fetch: every replay holds over both */
const describeOverEachFetch = (name: string, body: () => void) => {
  for (const each of FETCHES)
    describe(`${name}, over ${each.name}`, () => {
      beforeEach(() => {
        fetchUnderTest = each.fetch;
      });
      body();
    });
};
const context = (urls?: { anthropic: string; openai: string }): BrainContext => ({
  ...contextFor({ urls }),
  ...(fetchUnderTest ? { fetch: fetchUnderTest } : {}),
});
const tools: BrainToolDefinition[] = [
  {
    name: 'read_file',
    description: 'reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'write',
    description: 'writes a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  },
  { name: 'list_todos', description: 'lists the todos (no arguments)', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'wait',
    description: 'waits',
    inputSchema: {
      type: 'object',
      properties: {
        seconds: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        note: { type: ['string', 'null'] },
        loud: { oneOf: [{ type: 'boolean' }, { type: 'array' }] },
      },
      required: ['seconds'],
    },
  },
];
type Hooks = { onTextDelta?: (text: string) => void; onTextReset?: () => void };
const request = (hooks: Hooks = {}) => ({ messages: [{ role: 'user' as const, content: 'go' }], tools, ...hooks });
const claude = (hooks?: Hooks, urls?: { anthropic: string; openai: string }) =>
  genBrainAtom({ slug: 'claude/haiku' }).generate(request(hooks), context(urls));
const qwen = (hooks?: Hooks, urls?: { anthropic: string; openai: string }) =>
  genBrainAtom({ slug: 'qwen/qwen-plus' }).generate(request(hooks), context(urls));

/** a string cut into pieces of `size` UTF-16 units (a piece may end inside a surrogate pair, as a server's may) */
const chop = (text: string, size: number): string[] => {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
};
/** a string cut at the given UTF-16 offsets */
const cutAt = (text: string, ...offsets: number[]): string[] =>
  [0, ...offsets].map((from, index) => text.slice(from, index < offsets.length ? offsets[index] : undefined));

// ---- anthropic fixtures
const toolUseBlock = (index: number, id: string, name: string, fragments: string[]) => [
  { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
  ...fragments.map((partial_json) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } })),
  { type: 'content_block_stop', index },
];
const textBlock = (index: number, pieces: string[]) => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  ...pieces.map((text) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } })),
  { type: 'content_block_stop', index },
];
const anthropicBody = (content: Array<{ type: string } & Record<string, unknown>>, stopReason: string) =>
  anthropicSse(anthropicMessageEvents({ content, stopReason }));

type SseEvent = { type: string } & Record<string, unknown>;
/** the events with one of them (a negative index counts from the end) changed by `patch` */
const patchEvent = (events: SseEvent[], at: number, patch: (event: SseEvent) => Record<string, unknown>): SseEvent[] =>
  events.map((event, index) => (index === (at < 0 ? events.length + at : at) ? { ...event, ...patch(event) } : event));

// ---- openai fixtures
const callDelta = (index: number, part: { id?: string; name?: string; arguments?: string }) => ({
  tool_calls: [
    {
      index,
      ...(part.id ? { id: part.id, type: 'function' } : {}),
      function: { ...(part.name ? { name: part.name } : {}), ...(part.arguments !== undefined ? { arguments: part.arguments } : {}) },
    },
  ],
});
const openaiBody = (deltas: Array<Record<string, unknown>>, finishReason: string) => openaiSse(openaiChunks({ deltas, finishReason }));
/** one call whose arguments stream as the given fragments, the first delta carrying id and name with empty arguments (vLLM) */
const streamedCall = (index: number, id: string, name: string, fragments: string[]) => [
  callDelta(index, { id, name, arguments: '' }),
  ...fragments.map((text) => callDelta(index, { arguments: text })),
];
/** text content streamed as the given pieces */
const contentDeltas = (pieces: string[]) => pieces.map((content) => ({ content }));

/**
 * .what = a one-shot server that writes one body in byte pieces, a few ms apart
 * .why = the raw replay sends a body in one write; a multi-byte character or an SSE line split across network reads
 *        needs the bytes cut where a proxy or a slow server would cut them
 */
const serveInBytePieces = async (body: string, cutsAt: (bytes: Buffer) => number[]) => {
  const bytes = Buffer.from(body, 'utf8');
  const cuts = cutsAt(bytes);
  const sockets = new Set<Socket>();
  const http = createServer((req, res) => {
    void (async () => {
      // the request body is read and dropped: this server answers every request with the one body
      for await (const _chunk of req) void _chunk;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      let from = 0;
      for (const cut of [...cuts, bytes.length]) {
        res.write(bytes.subarray(from, cut));
        from = cut;
        await new Promise((resolve) => setTimeout(resolve, 4));
      }
      res.end();
    })();
  });
  http.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  return {
    urls: { anthropic: url, openai: `${url}/v1` },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        http.close(() => resolve());
      }),
  };
};
/** byte offsets inside every multi-byte character of `bytes` (one cut after each character's first byte) */
const insideMultiByte = (bytes: Buffer): number[] => {
  const cuts: number[] = [];
  for (let at = 0; at < bytes.length; at += 1) if (bytes[at] >= 0xc0) cuts.push(at + 1);
  return cuts;
};

describeOverEachFetch('wire (openai): text answers', () => {
  it('wire (openai): text streamed in one-character deltas is joined exactly, with usage from the last chunk (include_usage)', async () => {
    const answer = 'The file has 3 lines:\n- a\n- b\n- c';
    replayer().replay(openaiBody(contentDeltas(chop(answer, 1)), 'stop'));
    const seen: string[] = [];
    const generation = await qwen({ onTextDelta: (text) => seen.push(text) });
    expect(generation).toMatchObject({ stopReason: 'end', message: { content: answer, toolCalls: [] }, tokens: { input: 12, output: 9 } });
    expect(seen.join('')).toBe(answer);
    expect(replayer().requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('wire (openai): cached prompt tokens (prompt_tokens_details.cached_tokens) are split out of input into cache.get', async () => {
    const chunks: Array<Record<string, unknown>> = openaiChunks({ deltas: [{ content: 'ok' }], finishReason: 'stop' });
    chunks[chunks.length - 1] = {
      ...chunks[chunks.length - 1],
      usage: { prompt_tokens: 1000, completion_tokens: 5, total_tokens: 1005, prompt_tokens_details: { cached_tokens: 800 } },
    };
    replayer().replay(openaiSse(chunks));
    expect((await qwen()).tokens).toEqual({ input: 200, output: 5, cache: { get: 800, set: 0 } });
  });

  it('wire (openai): empty and null content deltas add nothing and are not streamed as text', async () => {
    replayer().replay(
      openaiBody([{ content: '' }, { content: 'Hello' }, { content: null }, { content: '' }, { content: ', world' }], 'stop'),
    );
    const seen: string[] = [];
    const generation = await qwen({ onTextDelta: (text) => seen.push(text) });
    expect(generation.message.content).toBe('Hello, world');
    expect(seen).toEqual(['Hello', ', world']);
  });

  it('wire (openai): a chunk with empty choices mid-stream (a keep-alive chunk) is skipped', async () => {
    const chunks: Array<Record<string, unknown>> = openaiChunks({
      deltas: [{ content: 'one ' }, { content: 'two' }],
      finishReason: 'stop',
    });
    chunks.splice(2, 0, {
      id: 'chatcmpl-replay01',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'qwen-plus',
      choices: [],
    });
    replayer().replay(openaiSse(chunks));
    expect((await qwen()).message.content).toBe('one two');
  });

  it('wire (openai): anything after data: [DONE] is ignored', async () => {
    const late = JSON.stringify({
      id: 'x',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'qwen-plus',
      choices: [{ index: 0, delta: { content: ' LATE' }, finish_reason: null }],
    });
    replayer().replay(`${openaiBody([{ content: 'done' }], 'stop')}data: ${late}\n\n`);
    expect((await qwen()).message.content).toBe('done');
  });

  it('wire (openai): a stream that closes after the finish chunk without data: [DONE] still answers', async () => {
    replayer().replay(openaiBody([{ content: 'no done marker' }], 'stop').replace('data: [DONE]\n\n', ''));
    expect(await qwen()).toMatchObject({ stopReason: 'end', message: { content: 'no done marker' }, attempts: 1 });
  });

  it('wire (openai): CRLF line endings frame the same events as LF', async () => {
    replayer().replay(openaiBody([{ content: 'line one\n' }, { content: 'line two' }], 'stop').replace(/\n\n/g, '\r\n\r\n'));
    expect((await qwen()).message.content).toBe('line one\nline two');
  });

  it('wire (openai): SSE comment lines (": ping" keep-alives) between events are skipped', async () => {
    const body = openaiBody([{ content: 'a' }, { content: 'b' }], 'stop')
      .split('\n\n')
      .join('\n\n: ping - 2025-01-01 00:00:00\n\n');
    replayer().replay(`: OPENROUTER PROCESSING\n\n${body}`);
    expect((await qwen()).message.content).toBe('ab');
  });

  it('wire (openai): a data: field without the space after the colon is read the same', async () => {
    replayer().replay(openaiBody([{ content: 'tight' }, { content: ' framing' }], 'stop').replace(/^data: /gm, 'data:'));
    expect((await qwen()).message.content).toBe('tight framing');
  });

  it('wire (openai): multi-byte UTF-8 (é, 中, 😀) cut between network reads arrives whole', async () => {
    const answer = 'café 中文 😀 ok';
    const replay = await serveInBytePieces(openaiBody(contentDeltas(chop(answer, 3)), 'stop'), insideMultiByte);
    try {
      expect((await qwen({}, replay.urls)).message.content).toBe(answer);
    } finally {
      await replay.close();
    }
  });

  it('wire (openai): SSE lines cut between network reads mid-field and between CR and LF are reassembled', async () => {
    const body = openaiBody([{ content: 'split ' }, { content: 'lines' }], 'stop').replace(/\n/g, '\r\n');
    const replay = await serveInBytePieces(body, (bytes) => {
      const cuts: number[] = [];
      for (let at = 1; at < bytes.length; at += 1) if (bytes[at - 1] === 0x0d || bytes[at - 1] === 0x3a) cuts.push(at);
      return cuts;
    });
    try {
      expect((await qwen({}, replay.urls)).message.content).toBe('split lines');
    } finally {
      await replay.close();
    }
  });

  it('wire (openai): a stream cut before any finish_reason is retried, and the retry answers', async () => {
    replayer().replay(
      'data: ' + JSON.stringify(openaiChunks({ deltas: [{ content: 'half' }], finishReason: 'stop' })[1]) + '\n\n',
      openaiBody([{ content: 'whole' }], 'stop'),
    );
    const resets: number[] = [];
    const generation = await qwen({ onTextReset: () => resets.push(1) });
    expect(generation).toMatchObject({ message: { content: 'whole' }, attempts: 2 });
    expect(resets).toHaveLength(1);
  });

  it('wire (openai): an in-stream {"error": …} chunk (as vLLM and OpenRouter send) fails the attempt and is retried', async () => {
    const error = `data: ${JSON.stringify({ error: { message: 'upstream overloaded', type: 'server_error', code: 503 } })}\n\n`;
    replayer().replay(
      `data: ${JSON.stringify(openaiChunks({ deltas: [], finishReason: 'stop' })[0])}\n\n${error}`,
      openaiBody([{ content: 'recovered' }], 'stop'),
    );
    expect(await qwen()).toMatchObject({ message: { content: 'recovered' }, attempts: 2 });
  });
});

describeOverEachFetch('wire (openai): native tool_calls, arguments as they stream', () => {
  it('wire (openai): arguments streamed one character per delta are joined into the exact input', async () => {
    const args = JSON.stringify({ path: 'src/a b.ts', content: 'const x = {"k": [1, 2]};\n\ttabbed\\back' });
    replayer().replay(openaiBody(streamedCall(0, 'call_1', 'write', chop(args, 1)), 'tool_calls'));
    const generation = await qwen();
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.message.toolCalls).toEqual([{ id: 'call_1', name: 'write', input: JSON.parse(args) }]);
  });

  it('wire (openai): arguments split between a backslash and what it escapes (\\" and \\n) are joined exactly', async () => {
    const args = '{"path": "q.txt", "content": "say \\"hi\\"\\nbye"}';
    const slash = args.indexOf('\\"');
    const newline = args.indexOf('\\n');
    replayer().replay(openaiBody(streamedCall(0, 'call_e', 'write', cutAt(args, slash + 1, newline + 1)), 'tool_calls'));
    expect((await qwen()).message.toolCalls[0].input).toEqual({ path: 'q.txt', content: 'say "hi"\nbye' });
  });

  it('wire (openai): arguments split inside a \\ud83d\\ude00 escape pair (mid-escape) are joined exactly', async () => {
    const args = '{"path": "e.md", "content": "smile \\ud83d\\ude00 \\u00e9"}';
    const at = args.indexOf('\\ude00');
    replayer().replay(
      openaiBody(streamedCall(0, 'call_s', 'write', cutAt(args, at - 3, at + 3, args.indexOf('\\u00e9') + 4)), 'tool_calls'),
    );
    expect((await qwen()).message.toolCalls[0].input).toEqual({ path: 'e.md', content: 'smile 😀 é' });
  });

  it('wire (openai): arguments split between the two halves of a surrogate pair (raw characters) are joined exactly', async () => {
    const args = JSON.stringify({ path: 'u.md', content: 'a😀b🎉c 中文 é' });
    const pieces = cutAt(args, args.indexOf('😀') + 1, args.indexOf('🎉') + 1);
    expect(pieces[0].endsWith('\ud83d')).toBe(true);
    replayer().replay(openaiBody(streamedCall(0, 'call_u', 'write', pieces), 'tool_calls'));
    expect((await qwen()).message.toolCalls[0].input).toEqual({ path: 'u.md', content: 'a😀b🎉c 中文 é' });
  });

  it('wire (openai): multi-byte UTF-8 in arguments cut between network reads arrives whole', async () => {
    const args = JSON.stringify({ path: 'ü.md', content: 'naïve 日本語 🚀' });
    const replay = await serveInBytePieces(openaiBody(streamedCall(0, 'call_b', 'write', chop(args, 5)), 'tool_calls'), insideMultiByte);
    try {
      expect((await qwen({}, replay.urls)).message.toolCalls).toEqual([{ id: 'call_b', name: 'write', input: JSON.parse(args) }]);
    } finally {
      await replay.close();
    }
  });

  it('wire (openai): three parallel calls whose deltas interleave stay apart, in index order, after text', async () => {
    replayer().replay(
      openaiBody(
        [
          { content: 'Reading three files.' },
          callDelta(0, { id: 'call_a', name: 'read_file', arguments: '{"pa' }),
          callDelta(1, { id: 'call_b', name: 'read_file', arguments: '' }),
          callDelta(2, { id: 'call_c', name: 'write', arguments: '{"path": "c' }),
          callDelta(1, { arguments: '{"path": "b.ts"' }),
          callDelta(0, { arguments: 'th": "a.ts"}' }),
          callDelta(2, { arguments: '.ts", "content": ""}' }),
          callDelta(1, { arguments: '}' }),
        ],
        'tool_calls',
      ),
    );
    const generation = await qwen();
    expect(generation.message.content).toBe('Reading three files.');
    expect(generation.message.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', input: { path: 'a.ts' } },
      { id: 'call_b', name: 'read_file', input: { path: 'b.ts' } },
      { id: 'call_c', name: 'write', input: { path: 'c.ts', content: '' } },
    ]);
  });
});

describeOverEachFetch('wire (openai): native tool_calls, as each server sends them', () => {
  it('wire (openai): a whole call in one delta (Ollama and llama.cpp style) is one call', async () => {
    replayer().replay(openaiBody([callDelta(0, { id: 'call_w', name: 'read_file', arguments: '{"path":"w.ts"}' })], 'tool_calls'));
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_w', name: 'read_file', input: { path: 'w.ts' } }]);
  });

  it('wire (openai): a call with empty arguments to a tool without parameters is a call with input {}', async () => {
    replayer().replay(openaiBody([callDelta(0, { id: 'call_t', name: 'list_todos', arguments: '' })], 'tool_calls'));
    expect(await qwen()).toMatchObject({
      stopReason: 'tool_calls',
      message: { toolCalls: [{ id: 'call_t', name: 'list_todos', input: {} }] },
    });
  });

  it('wire (openai): tool calls that end with finish_reason stop (some vLLM versions) are still run as tool_calls', async () => {
    replayer().replay(openaiBody(streamedCall(0, 'call_st', 'read_file', ['{"path": ', '"s.ts"}']), 'stop'));
    expect(await qwen()).toMatchObject({
      stopReason: 'tool_calls',
      message: { toolCalls: [{ name: 'read_file', input: { path: 's.ts' } }] },
    });
  });

  it('wire (openai): arguments that are not JSON become an inputError naming the tool, and the call still reaches the loop', async () => {
    replayer().replay(openaiBody(streamedCall(0, 'call_bad', 'read_file', ["{'path': 'a.ts'}"]), 'tool_calls'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call).toMatchObject({ id: 'call_bad', name: 'read_file', input: {} });
    expect(call.inputError).toMatch(
      /^the arguments of read_file are not valid JSON \(.*; 16 characters received\)\. Call read_file again with a JSON object$/,
    );
  });

  it('wire (openai): arguments that miss a required property reach the loop as sent, for the session to check', async () => {
    replayer().replay(openaiBody(streamedCall(0, 'call_req', 'write', ['{"path": "x.md"}']), 'tool_calls'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call.input).toEqual({ path: 'x.md' });
    expect(call.inputError).toBeUndefined();
  });
  it('wire (openai): a call streamed without any id (older llama.cpp) gets a generated id and still runs', async () => {
    replayer().replay(
      openaiBody(
        [
          { tool_calls: [{ index: 0, function: { name: 'read_file', arguments: '{"path": ' } }] },
          { tool_calls: [{ index: 0, function: { arguments: '"n.ts"}' } }] },
        ],
        'tool_calls',
      ),
    );
    const [call] = (await qwen()).message.toolCalls;
    expect(call).toMatchObject({ name: 'read_file', input: { path: 'n.ts' } });
    expect(call.id).toMatch(/\S/);
  });

  it('wire (openai): usage sent on the finish chunk itself (no separate usage chunk) is read', async () => {
    const chunks: Array<Record<string, unknown>> = openaiChunks({ deltas: [{ content: 'hi' }], finishReason: 'stop' });
    // drop the separate usage chunk; the finish chunk carries the usage instead
    chunks.pop();
    chunks[chunks.length - 1] = { ...chunks[chunks.length - 1], usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 } };
    replayer().replay(openaiSse(chunks));
    expect((await qwen()).tokens).toEqual({ input: 40, output: 3, cache: { get: 0, set: 0 } });
  });
  it('wire (openai): the last arguments delta and finish_reason in the same chunk (vLLM) both count', async () => {
    const chunks: Array<Record<string, unknown>> = openaiChunks({
      deltas: [callDelta(0, { id: 'call_v', name: 'read_file', arguments: '{"path": ' })],
      finishReason: 'tool_calls',
    });
    const finish = chunks[2] as { choices: Array<Record<string, unknown>> };
    chunks[2] = { ...finish, choices: [{ ...finish.choices[0], delta: callDelta(0, { arguments: '"v.ts"}' }) }] };
    replayer().replay(openaiSse(chunks));
    expect(await qwen()).toMatchObject({
      stopReason: 'tool_calls',
      message: { toolCalls: [{ id: 'call_v', name: 'read_file', input: { path: 'v.ts' } }] },
    });
  });

  it('wire (openai): DashScope-style continuation deltas (id "", name "" or null, arguments null) are not new calls and add nothing', async () => {
    replayer().replay(
      openaiBody(
        [
          { tool_calls: [{ index: 0, id: 'call_ds', type: 'function', function: { name: 'read_file', arguments: null } }] },
          { tool_calls: [{ index: 0, id: '', type: 'function', function: { name: '', arguments: '{"path": "d' } }] },
          { tool_calls: [{ index: 0, id: '', type: 'function', function: { name: null, arguments: 's.ts"}' } }] },
          { tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: null } }] },
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_ds', name: 'read_file', input: { path: 'ds.ts' } }]);
  });

  it('wire (openai): parallel calls sent without an index (some compatible servers omit it) are told apart by id', async () => {
    replayer().replay(
      openaiBody(
        [
          { tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'read_file', arguments: '{"path": "x.ts"}' } }] },
          { tool_calls: [{ id: 'call_y', type: 'function', function: { name: 'read_file', arguments: '{"path": "y.ts"}' } }] },
        ],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([
      { id: 'call_x', name: 'read_file', input: { path: 'x.ts' } },
      { id: 'call_y', name: 'read_file', input: { path: 'y.ts' } },
    ]);
  });

  it('wire (openai): a chunk whose JSON is spread over several data: lines of one event (SSE multi-line data) is read whole', async () => {
    const body = openaiBody(streamedCall(0, 'call_m', 'read_file', ['{"path": "m.ts"}']), 'tool_calls').replace(
      /^data: (\{.*),"model":/gm,
      'data: $1,\ndata: "model":',
    );
    expect(body).toMatch(/\ndata: "model":/);
    replayer().replay(body);
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_m', name: 'read_file', input: { path: 'm.ts' } }]);
  });
});

describeOverEachFetch('wire (openai): qwen3-coder and hermes <tool_call> text streamed in deltas (no server tool parser)', () => {
  const xml = (name: string, params: Record<string, string>) =>
    `<tool_call>\n<function=${name}>\n${Object.entries(params)
      .map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`)
      .join('')}</function>\n</tool_call>`;

  it('wire (openai): markup that turns out to be a tool call is not left shown as answer text (a reset, then the answer)', async () => {
    const text = `Writing.\n${xml('write', { path: 'a.md', content: 'hi' })}`;
    replayer().replay(openaiBody(contentDeltas(chop(text, 6)), 'stop'));
    let shown = '';
    const generation = await qwen({ onTextDelta: (delta) => (shown += delta), onTextReset: () => (shown = '') });
    expect(generation.message.toolCalls).toHaveLength(1);
    expect(shown).toBe(generation.message.content);
    expect(shown).not.toContain('<tool_call>');
  });

  it('wire (openai): a qwen3-coder call streamed in 7-character deltas (tags cut mid-way) is recovered, the text before it is the answer', async () => {
    const text = `I'll write it now.\n\n${xml('write', { path: 'hello.py', content: 'print("hi")\n' })}`;
    replayer().replay(openaiBody(contentDeltas(chop(text, 7)), 'stop'));
    const generation = await qwen();
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.message.content).toBe("I'll write it now.");
    expect(generation.message.toolCalls).toMatchObject([{ name: 'write', input: { path: 'hello.py', content: 'print("hi")\n' } }]);
    expect(generation.message.toolCalls[0].inputError).toBeUndefined();
  });

  it('wire (openai): a value holding a literal </parameter>, </function> and a whole <tool_call> block is written exactly', async () => {
    const content = [
      'a parameter ends with </parameter>',
      'a function ends with </function>',
      '<tool_call>',
      '<function=write>',
      '<parameter=path>',
      'inner.txt',
      '</parameter>',
      '</function>',
      '</tool_call>',
      'done',
    ].join('\n');
    replayer().replay(openaiBody(contentDeltas(chop(xml('write', { path: 'notes.md', content }), 5)), 'stop'));
    const generation = await qwen();
    expect(generation.message.toolCalls).toHaveLength(1);
    expect(generation.message.toolCalls[0]).toMatchObject({ name: 'write', input: { path: 'notes.md', content } });
    expect(generation.message.toolCalls[0].inputError).toBeUndefined();
    expect(generation.message.content).toBe('');
  });

  it('wire (openai): a call without the <tool_call> opener (vLLM fallback_no_tags) is still a call', async () => {
    const text = 'Checking.\n<function=read_file>\n<parameter=path>\nsrc/index.ts\n</parameter>\n</function>';
    replayer().replay(openaiBody(contentDeltas(chop(text, 4)), 'stop'));
    const generation = await qwen();
    expect(generation).toMatchObject({
      stopReason: 'tool_calls',
      message: { content: 'Checking.', toolCalls: [{ name: 'read_file', input: { path: 'src/index.ts' } }] },
    });
  });

  it('wire (openai): a missing </parameter> never merges two parameters: the call carries an inputError quoting the problem', async () => {
    const text =
      '<tool_call>\n<function=write>\n<parameter=path>\na.txt\n<parameter=content>\nhello\n</parameter>\n</function>\n</tool_call>';
    replayer().replay(openaiBody(contentDeltas(chop(text, 6)), 'stop'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call.name).toBe('write');
    expect(call.inputError).toMatch(
      /^the call to write could not be read exactly: <parameter=path> is not closed by <\/parameter> before "<parameter=content>/,
    );
  });

  it('wire (openai): a qwen3-coder call cut mid-parameter by finish_reason length is not run', async () => {
    const text = '<tool_call>\n<function=write>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nline one\nline tw';
    replayer().replay(openaiBody(contentDeltas(chop(text, 9)), 'length'));
    const generation = await qwen();
    const [call] = generation.message.toolCalls;
    expect(call.inputError).toMatch(/<parameter=content> is not closed by <\/parameter> \(the text ends inside it\)/);
  });

  it('wire (openai): anyOf [integer, null] and oneOf [boolean, array] values are typed by the schema', async () => {
    replayer().replay(openaiBody(contentDeltas(chop(xml('wait', { seconds: '30', loud: 'False' }), 8)), 'stop'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call).toMatchObject({ name: 'wait', input: { seconds: 30, loud: false } });
    expect(call.inputError).toBeUndefined();
  });

  it('wire (openai): nullable values — "null" for anyOf [integer, null] and for ["string","null"] is null, other text stays text', async () => {
    replayer().replay(
      openaiBody(contentDeltas(chop(xml('wait', { seconds: 'null', note: 'null' }), 8)), 'stop'),
      openaiBody(contentDeltas(chop(xml('wait', { seconds: 'None', note: '42' }), 8)), 'stop'),
    );
    expect((await qwen()).message.toolCalls[0]).toMatchObject({ input: { seconds: null, note: null } });
    expect((await qwen()).message.toolCalls[0]).toMatchObject({ input: { seconds: null, note: '42' } });
  });

  it("wire (openai): a value that fits no branch of anyOf stays text, for the session's schema check to tell the model", async () => {
    replayer().replay(openaiBody(contentDeltas(chop(xml('wait', { seconds: 'soon' }), 8)), 'stop'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call.input).toEqual({ seconds: 'soon' });
    expect(call.inputError).toBeUndefined();
  });

  it('wire (openai): two qwen3-coder calls in one streamed answer are two calls, in order', async () => {
    const text = `${xml('read_file', { path: 'a.ts' })}\n${xml('read_file', { path: 'b.ts' })}`;
    replayer().replay(openaiBody(contentDeltas(chop(text, 11)), 'stop'));
    expect((await qwen()).message.toolCalls.map((call) => call.input)).toEqual([{ path: 'a.ts' }, { path: 'b.ts' }]);
  });

  it('wire (openai): hermes {"name","arguments"} inside <tool_call>, streamed in deltas, is a call', async () => {
    const text = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>';
    replayer().replay(openaiBody(contentDeltas(chop(text, 5)), 'stop'));
    const generation = await qwen();
    expect(generation).toMatchObject({
      stopReason: 'tool_calls',
      message: { content: 'Let me look.', toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] },
    });
  });

  it('wire (openai): a hermes json string value holding a literal </tool_call> is kept', async () => {
    const text = '<tool_call>\n{"name": "write", "arguments": {"path": "a", "content": "x </tool_call> y"}}\n</tool_call>';
    replayer().replay(openaiBody(contentDeltas(chop(text, 3)), 'stop'));
    expect((await qwen()).message.toolCalls[0]).toMatchObject({ name: 'write', input: { path: 'a', content: 'x </tool_call> y' } });
  });

  it('wire (openai): prose that only mentions <tool_call> or <function=name> stays the answer (no call)', async () => {
    const text = 'I would use <tool_call> here, and the format is <function=name> followed by parameters.';
    replayer().replay(openaiBody(contentDeltas(chop(text, 6)), 'stop'));
    expect(await qwen()).toMatchObject({ stopReason: 'end', message: { content: text, toolCalls: [] } });
  });

  it('wire (openai): native tool_calls win over <tool_call> text in the content (no double call)', async () => {
    replayer().replay(
      openaiBody(
        [{ content: xml('read_file', { path: 'text.ts' }) }, ...streamedCall(0, 'call_n', 'read_file', ['{"path": "native.ts"}'])],
        'tool_calls',
      ),
    );
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_n', name: 'read_file', input: { path: 'native.ts' } }]);
  });
});

describeOverEachFetch('wire (anthropic): text and usage', () => {
  it('wire (anthropic): text in one-character text_delta events is joined exactly and streamed in order', async () => {
    const answer = 'Done — wrote 2 files.\n```ts\nconst a = "x";\n```';
    replayer().replay(anthropicBody(textBlock(0, chop(answer, 1)), 'end_turn'));
    const seen: string[] = [];
    const generation = await claude({ onTextDelta: (text) => seen.push(text) });
    expect(generation).toMatchObject({ stopReason: 'end', message: { content: answer, toolCalls: [] }, attempts: 1 });
    expect(seen.join('')).toBe(answer);
  });

  it('wire (anthropic): usage is read from message_start (input, cache_read, cache_creation) and message_delta (output)', async () => {
    let events = anthropicMessageEvents({ content: textBlock(0, ['ok']), stopReason: 'end_turn' });
    events = patchEvent(events, 0, (event) => ({
      message: {
        ...(event.message as object),
        usage: { input_tokens: 21, output_tokens: 1, cache_read_input_tokens: 15000, cache_creation_input_tokens: 340 },
      },
    }));
    events = patchEvent(events, -2, () => ({ usage: { output_tokens: 77 } }));
    replayer().replay(anthropicSse(events));
    expect((await claude()).tokens).toEqual({ input: 21, output: 77, cache: { get: 15000, set: 340 } });
  });

  it('wire (anthropic): cumulative usage in message_delta (input and cache counts, as the API now sends) overrides message_start', async () => {
    const events = patchEvent(anthropicMessageEvents({ content: textBlock(0, ['ok']), stopReason: 'end_turn' }), -2, () => ({
      usage: { input_tokens: 30, output_tokens: 12, cache_read_input_tokens: 900, cache_creation_input_tokens: 5 },
    }));
    replayer().replay(anthropicSse(events));
    expect((await claude()).tokens).toEqual({ input: 30, output: 12, cache: { get: 900, set: 5 } });
  });

  it('wire (anthropic): ping events before and between content events are skipped', async () => {
    const events = anthropicMessageEvents({ content: textBlock(0, ['Hel', 'lo']), stopReason: 'end_turn' });
    const body = events.map((event) => anthropicSse([event]) + 'event: ping\ndata: {"type": "ping"}\n\n').join('');
    replayer().replay(body);
    expect((await claude()).message.content).toBe('Hello');
  });

  it('wire (anthropic): stop_sequence ends the answer (stopReason end) with the text before the sequence', async () => {
    const events = patchEvent(anthropicMessageEvents({ content: textBlock(0, ['answer: 42']), stopReason: 'stop_sequence' }), -2, () => ({
      delta: { stop_reason: 'stop_sequence', stop_sequence: '\n\nHuman:' },
    }));
    replayer().replay(anthropicSse(events));
    expect(await claude()).toMatchObject({ stopReason: 'end', message: { content: 'answer: 42', toolCalls: [] } });
  });

  it('wire (anthropic): text present in content_block_start is kept before the deltas', async () => {
    replayer().replay(
      anthropicBody(
        [
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Pre' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'fix' } },
          { type: 'content_block_stop', index: 0 },
        ],
        'end_turn',
      ),
    );
    expect((await claude()).message.content).toBe('Prefix');
  });

  it('wire (anthropic): two text blocks are joined in index order', async () => {
    replayer().replay(anthropicBody([...textBlock(0, ['First. ']), ...textBlock(1, ['Second.'])], 'end_turn'));
    expect((await claude()).message.content).toBe('First. Second.');
  });
});

describeOverEachFetch('wire (anthropic): framing, and blocks that are not local text', () => {
  it('wire (anthropic): unknown event types and an unknown content block with its own delta type are ignored', async () => {
    replayer().replay(
      anthropicBody(
        [
          { type: 'future_event', detail: { anything: true } },
          ...textBlock(0, ['kept']),
          { type: 'content_block_start', index: 1, content_block: { type: 'future_block', payload: 'x' } },
          { type: 'content_block_delta', index: 1, delta: { type: 'future_delta', value: 'ignored' } },
          { type: 'content_block_stop', index: 1 },
        ],
        'end_turn',
      ),
    );
    expect(await claude()).toMatchObject({ stopReason: 'end', message: { content: 'kept', toolCalls: [] } });
  });

  it('wire (anthropic): citations_delta on a text block does not enter the text', async () => {
    const citation = {
      type: 'char_location',
      cited_text: 'The sky is blue.',
      document_index: 0,
      document_title: 'doc',
      start_char_index: 0,
      end_char_index: 16,
    };
    replayer().replay(
      anthropicBody(
        [
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: [] } },
          { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'the sky is blue' } },
          { type: 'content_block_stop', index: 0 },
        ],
        'end_turn',
      ),
    );
    expect((await claude()).message.content).toBe('the sky is blue');
  });

  it('wire (anthropic): server_tool_use and web_search_tool_result blocks are not local tool calls; the text around them is the answer', async () => {
    replayer().replay(
      anthropicBody(
        [
          ...textBlock(0, ['Searching. ']),
          {
            type: 'content_block_start',
            index: 1,
            content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
          },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"query": "bhrain"}' } },
          { type: 'content_block_stop', index: 1 },
          {
            type: 'content_block_start',
            index: 2,
            content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
          },
          { type: 'content_block_stop', index: 2 },
          ...textBlock(3, ['Nothing found.']),
        ],
        'end_turn',
      ),
    );
    expect(await claude()).toMatchObject({ stopReason: 'end', message: { content: 'Searching. Nothing found.', toolCalls: [] } });
  });

  it('wire (anthropic): CRLF line endings frame the same events as LF', async () => {
    replayer().replay(anthropicBody(textBlock(0, ['crlf ', 'framed']), 'end_turn').replace(/\n/g, '\r\n'));
    expect((await claude()).message.content).toBe('crlf framed');
  });

  it('wire (anthropic): event: and data: fields without the space after the colon, and comment lines, are read the same', async () => {
    const body = anthropicBody(textBlock(0, ['tight']), 'end_turn')
      .replace(/^event: /gm, 'event:')
      .replace(/^data: /gm, 'data:');
    replayer().replay(`: keep-alive\n\n${body.split('\n\n').join('\n\n: comment\n\n')}`);
    expect((await claude()).message.content).toBe('tight');
  });

  it('wire (anthropic): an event whose JSON is spread over several data: lines (SSE multi-line data) is read whole', async () => {
    const body = anthropicBody(textBlock(0, ['multi', '-line']), 'end_turn').replace(
      /^data: (\{"type":"content_block_delta",)/gm,
      'data: $1\ndata: ',
    );
    expect(body).toMatch(/content_block_delta",\ndata: /);
    replayer().replay(body);
    expect((await claude()).message.content).toBe('multi-line');
  });

  it('wire (anthropic): multi-byte UTF-8 text (é, 中, 😀) cut between network reads arrives whole', async () => {
    const answer = 'résumé 漢字 👍🏽 end';
    const replay = await serveInBytePieces(anthropicBody(textBlock(0, chop(answer, 2)), 'end_turn'), insideMultiByte);
    try {
      expect((await claude({}, replay.urls)).message.content).toBe(answer);
    } finally {
      await replay.close();
    }
  });
});

describeOverEachFetch('wire (anthropic): tool_use input_json_delta', () => {
  it('wire (anthropic): input split inside strings and keys (the API sends an empty first partial_json) is joined exactly', async () => {
    const input = { path: 'src/deep/file name.ts', content: 'export const x = 1;\n' };
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_1', 'write', ['', ...chop(JSON.stringify(input), 3)]), 'tool_use'));
    const generation = await claude();
    expect(generation).toMatchObject({ stopReason: 'tool_calls', message: { toolCalls: [{ id: 'toolu_1', name: 'write', input }] } });
  });

  it('wire (anthropic): input split between a backslash and the quote it escapes (\\") is joined exactly', async () => {
    const json = '{"path": "q.txt", "content": "he said \\"yes\\" then \\\\ left"}';
    const at = json.indexOf('\\"');
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_q', 'write', cutAt(json, at + 1, json.indexOf('\\\\') + 1)), 'tool_use'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'q.txt', content: 'he said "yes" then \\ left' });
  });

  it('wire (anthropic): input split in the middle of a \\u00e9 escape is joined exactly', async () => {
    const json = '{"path": "caf\\u00e9.md", "content": "na\\u00efve"}';
    const at = json.indexOf('\\u00e9');
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_u', 'write', cutAt(json, at + 1, at + 4)), 'tool_use'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'café.md', content: 'naïve' });
  });

  it('wire (anthropic): input split between the two escapes of a surrogate pair (\\ud83d|\\ude80) is joined exactly', async () => {
    const json = '{"path": "r.md", "content": "launch \\ud83d\\ude80!"}';
    const at = json.indexOf('\\ude80');
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_s', 'write', cutAt(json, at - 2, at, at + 2)), 'tool_use'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'r.md', content: 'launch 🚀!' });
  });

  it('wire (anthropic): input split between the halves of a raw surrogate pair is joined exactly', async () => {
    const json = JSON.stringify({ path: 'p.md', content: 'x😀y 日本 ü' });
    const pieces = cutAt(json, json.indexOf('😀') + 1);
    expect(pieces[0].endsWith('\ud83d')).toBe(true);
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_r', 'write', pieces), 'tool_use'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'p.md', content: 'x😀y 日本 ü' });
  });

  it('wire (anthropic): multi-byte UTF-8 in input_json_delta cut between network reads arrives whole', async () => {
    const input = { path: 'ñ.md', content: 'Grüße 🌍 世界' };
    const replay = await serveInBytePieces(
      anthropicBody(toolUseBlock(0, 'toolu_b', 'write', chop(JSON.stringify(input), 4)), 'tool_use'),
      insideMultiByte,
    );
    try {
      expect((await claude({}, replay.urls)).message.toolCalls).toEqual([{ id: 'toolu_b', name: 'write', input }]);
    } finally {
      await replay.close();
    }
  });

  it('wire (anthropic): parallel tool_use blocks after text are separate calls, in block order', async () => {
    replayer().replay(
      anthropicBody(
        [
          ...textBlock(0, ['Reading both.']),
          ...toolUseBlock(1, 'toolu_a', 'read_file', ['{"path":', ' "a.ts"}']),
          ...toolUseBlock(2, 'toolu_b', 'read_file', ['{"pa', 'th": "b.ts"}']),
        ],
        'tool_use',
      ),
    );
    const generation = await claude();
    expect(generation.message).toEqual({
      role: 'assistant',
      content: 'Reading both.',
      toolCalls: [
        { id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
        { id: 'toolu_b', name: 'read_file', input: { path: 'b.ts' } },
      ],
    });
  });

  it('wire (anthropic): a tool_use with no input deltas (input {}) is a call with input {}', async () => {
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_e', 'list_todos', []), 'tool_use'));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_e', name: 'list_todos', input: {} }]);
  });

  it('wire (anthropic): a tool_use whose whole input arrives in content_block_start (no deltas, as some gateways send) keeps that input', async () => {
    replayer().replay(
      anthropicBody(
        [
          {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: 'toolu_pre', name: 'read_file', input: { path: 'pre.ts' } },
          },
          { type: 'content_block_stop', index: 0 },
        ],
        'tool_use',
      ),
    );
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_pre', name: 'read_file', input: { path: 'pre.ts' } }]);
  });

  it('wire (anthropic): a tool_use with one empty partial_json is a call with input {}', async () => {
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_e2', 'list_todos', ['']), 'tool_use'));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_e2', name: 'list_todos', input: {} }]);
  });

  it('wire (anthropic): ping events between input_json_delta events do not disturb the input', async () => {
    const events = anthropicMessageEvents({
      content: toolUseBlock(0, 'toolu_p', 'read_file', ['{"path"', ': "p', 'ing.ts"}']),
      stopReason: 'tool_use',
    });
    replayer().replay(events.map((event) => `event: ping\ndata: {"type": "ping"}\n\n${anthropicSse([event])}`).join(''));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_p', name: 'read_file', input: { path: 'ping.ts' } }]);
  });

  it('wire (anthropic): input that does not fit the schema reaches the loop as sent, for the session to check', async () => {
    replayer().replay(anthropicBody(toolUseBlock(0, 'toolu_x', 'read_file', ['{"path": 42}']), 'tool_use'));
    const [call] = (await claude()).message.toolCalls;
    expect(call).toMatchObject({ id: 'toolu_x', name: 'read_file', input: { path: 42 } });
    expect(call.inputError).toBeUndefined();
  });
});

describeOverEachFetch('wire (anthropic): errors mid-stream', () => {
  const overloaded = 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n';

  it('wire (anthropic): an overloaded_error event after message_start fails the attempt; the retry answers and the text resets', async () => {
    const start = anthropicSse(anthropicMessageEvents({ content: [], stopReason: 'end_turn' }).slice(0, 1));
    replayer().replay(
      `${start}${anthropicSse(textBlock(0, ['partial']).slice(0, 2))}${overloaded}`,
      anthropicBody(textBlock(0, ['whole answer']), 'end_turn'),
    );
    const seen: string[] = [];
    let resets = 0;
    const generation = await claude({ onTextDelta: (text) => seen.push(text), onTextReset: () => (resets += 1) });
    expect(generation).toMatchObject({ message: { content: 'whole answer' }, attempts: 2 });
    expect(replayer().requests).toHaveLength(2);
    expect(resets).toBe(1);
    expect(seen).toEqual(['partial', 'whole answer']);
  });

  it('wire (anthropic): overloaded_error on every attempt ends in a typed error naming the supplier and the overload', async () => {
    replayer().replay(overloaded, overloaded, overloaded);
    await expect(claude()).rejects.toMatchObject({
      name: 'SupplierUnavailableError',
      message: expect.stringMatching(
        /^claude\/haiku failed 3 times in a row \(last: .*"overloaded_error".*\); the supplier is unreachable or overloaded/,
      ),
    });
    expect(replayer().requests).toHaveLength(3);
  });

  it('wire (anthropic): a stream that ends without message_stop is retried, not taken as a whole answer', async () => {
    const events = anthropicMessageEvents({ content: textBlock(0, ['cut']), stopReason: 'end_turn' });
    replayer().replay(anthropicSse(events.slice(0, -2)), anthropicBody(textBlock(0, ['complete']), 'end_turn'));
    expect(await claude()).toMatchObject({ message: { content: 'complete' }, attempts: 2 });
  });
});

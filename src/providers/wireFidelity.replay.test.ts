// Recorded-shape streams replayed byte for byte through the real SDKs: wire fidelity of both protocols
// The shapes are written from what public suites assert: vLLM's and SGLang's qwen3-coder / hermes tool-parser tests,
// qwen-code's streaming tool-call parser tests, the openai-node and anthropic-sdk-typescript streaming fixtures, and the
// SSE framing rules those SDKs' decoders follow (CRLF, comments, `data:` without a space, [DONE], ping, error events)
// Each body is a file under test/fixtures/wire/<protocol>/ (its README.md lists them), served exactly as stored
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';

import { useRawReplay } from '#standin/useRawReplay.js';
import { nodeHttpFetch } from './transport/nodeHttpFetch.js';
import type { BrainContext } from '../core/contract/BrainContext.js';
import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { genBrainAtom } from './genBrainAtom.js';

const { replayer, contextFor } = useRawReplay();
/** .what = the body a test serves: test/fixtures/wire/<protocol>/<name>.sse, exactly as stored (README.md there lists them) */
const wireFixture = (protocol: 'anthropic' | 'openai', name: string): string =>
  readFileSync(fileURLToPath(new URL(`../../test/fixtures/wire/${protocol}/${name}.sse`, import.meta.url)), 'utf8');

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
    replayer().replay(wireFixture('openai', 'text-one-char-deltas'));
    const seen: string[] = [];
    const generation = await qwen({ onTextDelta: (text) => seen.push(text) });
    expect(generation).toMatchObject({ stopReason: 'end', message: { content: answer, toolCalls: [] }, tokens: { input: 12, output: 9 } });
    expect(seen.join('')).toBe(answer);
    expect(replayer().requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('wire (openai): cached prompt tokens (prompt_tokens_details.cached_tokens) are split out of input into cache.get', async () => {
    replayer().replay(wireFixture('openai', 'usage-cached-tokens'));
    expect((await qwen()).tokens).toEqual({ input: 200, output: 5, cache: { get: 800, set: 0 } });
  });

  it('wire (openai): empty and null content deltas add nothing and are not streamed as text', async () => {
    replayer().replay(wireFixture('openai', 'text-empty-and-null-deltas'));
    const seen: string[] = [];
    const generation = await qwen({ onTextDelta: (text) => seen.push(text) });
    expect(generation.message.content).toBe('Hello, world');
    expect(seen).toEqual(['Hello', ', world']);
  });

  it('wire (openai): a chunk with empty choices mid-stream (a keep-alive chunk) is skipped', async () => {
    replayer().replay(wireFixture('openai', 'empty-choices-chunk'));
    expect((await qwen()).message.content).toBe('one two');
  });

  it('wire (openai): anything after data: [DONE] is ignored', async () => {
    replayer().replay(wireFixture('openai', 'data-after-done'));
    expect((await qwen()).message.content).toBe('done');
  });

  it('wire (openai): a stream that closes after the finish chunk without data: [DONE] still answers', async () => {
    replayer().replay(wireFixture('openai', 'no-done-marker'));
    expect(await qwen()).toMatchObject({ stopReason: 'end', message: { content: 'no done marker' }, attempts: 1 });
  });

  it('wire (openai): CRLF line endings frame the same events as LF', async () => {
    replayer().replay(wireFixture('openai', 'crlf'));
    expect((await qwen()).message.content).toBe('line one\nline two');
  });

  it('wire (openai): SSE comment lines (": ping" keep-alives) between events are skipped', async () => {
    replayer().replay(wireFixture('openai', 'comment-lines'));
    expect((await qwen()).message.content).toBe('ab');
  });

  it('wire (openai): a data: field without the space after the colon is read the same', async () => {
    replayer().replay(wireFixture('openai', 'data-without-space'));
    expect((await qwen()).message.content).toBe('tight framing');
  });

  it('wire (openai): multi-byte UTF-8 (é, 中, 😀) cut between network reads arrives whole', async () => {
    const answer = 'café 中文 😀 ok';
    const replay = await serveInBytePieces(wireFixture('openai', 'text-multi-byte'), insideMultiByte);
    try {
      expect((await qwen({}, replay.urls)).message.content).toBe(answer);
    } finally {
      await replay.close();
    }
  });

  it('wire (openai): SSE lines cut between network reads mid-field and between CR and LF are reassembled', async () => {
    const replay = await serveInBytePieces(wireFixture('openai', 'crlf-lines-cut'), (bytes) => {
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
    replayer().replay(wireFixture('openai', 'cut-before-finish.1'), wireFixture('openai', 'cut-before-finish.2'));
    const resets: number[] = [];
    const generation = await qwen({ onTextReset: () => resets.push(1) });
    expect(generation).toMatchObject({ message: { content: 'whole' }, attempts: 2 });
    expect(resets).toHaveLength(1);
  });

  it('wire (openai): an in-stream {"error": …} chunk (as vLLM and OpenRouter send) fails the attempt and is retried', async () => {
    replayer().replay(wireFixture('openai', 'in-stream-error.1'), wireFixture('openai', 'in-stream-error.2'));
    expect(await qwen()).toMatchObject({ message: { content: 'recovered' }, attempts: 2 });
  });
});

describeOverEachFetch('wire (openai): native tool_calls, arguments as they stream', () => {
  it('wire (openai): arguments streamed one character per delta are joined into the exact input', async () => {
    const args = JSON.stringify({ path: 'src/a b.ts', content: 'const x = {"k": [1, 2]};\n\ttabbed\\back' });
    replayer().replay(wireFixture('openai', 'args-one-char-deltas'));
    const generation = await qwen();
    expect(generation.stopReason).toBe('tool_calls');
    expect(generation.message.toolCalls).toEqual([{ id: 'call_1', name: 'write', input: JSON.parse(args) }]);
  });

  it('wire (openai): arguments split between a backslash and what it escapes (\\" and \\n) are joined exactly', async () => {
    replayer().replay(wireFixture('openai', 'args-split-at-backslash'));
    expect((await qwen()).message.toolCalls[0].input).toEqual({ path: 'q.txt', content: 'say "hi"\nbye' });
  });

  it('wire (openai): arguments split inside a \\ud83d\\ude00 escape pair (mid-escape) are joined exactly', async () => {
    replayer().replay(wireFixture('openai', 'args-split-in-surrogate-escapes'));
    expect((await qwen()).message.toolCalls[0].input).toEqual({ path: 'e.md', content: 'smile 😀 é' });
  });

  it('wire (openai): arguments split between the two halves of a surrogate pair (raw characters) are joined exactly', async () => {
    // the first fragment's string ends with the high half of 😀 (a lone surrogate, which JSON carries as \ud83d)
    expect(wireFixture('openai', 'args-split-in-raw-surrogate-pair')).toContain('\\"a\\ud83d"}');
    replayer().replay(wireFixture('openai', 'args-split-in-raw-surrogate-pair'));
    expect((await qwen()).message.toolCalls[0].input).toEqual({ path: 'u.md', content: 'a😀b🎉c 中文 é' });
  });

  it('wire (openai): multi-byte UTF-8 in arguments cut between network reads arrives whole', async () => {
    const args = JSON.stringify({ path: 'ü.md', content: 'naïve 日本語 🚀' });
    const replay = await serveInBytePieces(wireFixture('openai', 'args-multi-byte'), insideMultiByte);
    try {
      expect((await qwen({}, replay.urls)).message.toolCalls).toEqual([{ id: 'call_b', name: 'write', input: JSON.parse(args) }]);
    } finally {
      await replay.close();
    }
  });

  it('wire (openai): three parallel calls whose deltas interleave stay apart, in index order, after text', async () => {
    replayer().replay(wireFixture('openai', 'three-parallel-calls-interleaved'));
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
    replayer().replay(wireFixture('openai', 'whole-call-one-delta'));
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_w', name: 'read_file', input: { path: 'w.ts' } }]);
  });

  it('wire (openai): a call with empty arguments to a tool without parameters is a call with input {}', async () => {
    replayer().replay(wireFixture('openai', 'call-empty-arguments'));
    expect(await qwen()).toMatchObject({
      stopReason: 'tool_calls',
      message: { toolCalls: [{ id: 'call_t', name: 'list_todos', input: {} }] },
    });
  });

  it('wire (openai): tool calls that end with finish_reason stop (some vLLM versions) are still run as tool_calls', async () => {
    replayer().replay(wireFixture('openai', 'calls-finish-stop'));
    expect(await qwen()).toMatchObject({
      stopReason: 'tool_calls',
      message: { toolCalls: [{ name: 'read_file', input: { path: 's.ts' } }] },
    });
  });

  it('wire (openai): arguments that are not JSON become an inputError naming the tool, and the call still reaches the loop', async () => {
    replayer().replay(wireFixture('openai', 'args-not-json'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call).toMatchObject({ id: 'call_bad', name: 'read_file', input: {} });
    expect(call.inputError).toMatch(
      /^the arguments of read_file are not valid JSON \(.*; 16 characters received\)\. Call read_file again with a JSON object$/,
    );
  });

  it('wire (openai): arguments that miss a required property reach the loop as sent, for the session to check', async () => {
    replayer().replay(wireFixture('openai', 'args-missing-required'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call.input).toEqual({ path: 'x.md' });
    expect(call.inputError).toBeUndefined();
  });
  it('wire (openai): a call streamed without any id (older llama.cpp) gets a generated id and still runs', async () => {
    replayer().replay(wireFixture('openai', 'call-without-id'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call).toMatchObject({ name: 'read_file', input: { path: 'n.ts' } });
    expect(call.id).toMatch(/\S/);
  });

  it('wire (openai): usage sent on the finish chunk itself (no separate usage chunk) is read', async () => {
    replayer().replay(wireFixture('openai', 'usage-on-finish-chunk'));
    expect((await qwen()).tokens).toEqual({ input: 40, output: 3, cache: { get: 0, set: 0 } });
  });
  it('wire (openai): the last arguments delta and finish_reason in the same chunk (vLLM) both count', async () => {
    replayer().replay(wireFixture('openai', 'last-args-with-finish'));
    expect(await qwen()).toMatchObject({
      stopReason: 'tool_calls',
      message: { toolCalls: [{ id: 'call_v', name: 'read_file', input: { path: 'v.ts' } }] },
    });
  });

  it('wire (openai): DashScope-style continuation deltas (id "", name "" or null, arguments null) are not new calls and add nothing', async () => {
    replayer().replay(wireFixture('openai', 'dashscope-continuation-deltas'));
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_ds', name: 'read_file', input: { path: 'ds.ts' } }]);
  });

  it('wire (openai): parallel calls sent without an index (some compatible servers omit it) are told apart by id', async () => {
    replayer().replay(wireFixture('openai', 'parallel-calls-without-index'));
    expect((await qwen()).message.toolCalls).toEqual([
      { id: 'call_x', name: 'read_file', input: { path: 'x.ts' } },
      { id: 'call_y', name: 'read_file', input: { path: 'y.ts' } },
    ]);
  });

  it('wire (openai): a chunk whose JSON is spread over several data: lines of one event (SSE multi-line data) is read whole', async () => {
    expect(wireFixture('openai', 'multi-line-data')).toMatch(/\ndata: "model":/);
    replayer().replay(wireFixture('openai', 'multi-line-data'));
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_m', name: 'read_file', input: { path: 'm.ts' } }]);
  });
});

describeOverEachFetch('wire (openai): qwen3-coder and hermes <tool_call> text streamed in deltas (no server tool parser)', () => {
  it('wire (openai): markup that turns out to be a tool call is not left shown as answer text (a reset, then the answer)', async () => {
    replayer().replay(wireFixture('openai', 'xml-call-after-text'));
    let shown = '';
    const generation = await qwen({ onTextDelta: (delta) => (shown += delta), onTextReset: () => (shown = '') });
    expect(generation.message.toolCalls).toHaveLength(1);
    expect(shown).toBe(generation.message.content);
    expect(shown).not.toContain('<tool_call>');
  });

  it('wire (openai): a qwen3-coder call streamed in 7-character deltas (tags cut mid-way) is recovered, the text before it is the answer', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-7-char-deltas'));
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
    replayer().replay(wireFixture('openai', 'qwen3-coder-literal-closing-tags'));
    const generation = await qwen();
    expect(generation.message.toolCalls).toHaveLength(1);
    expect(generation.message.toolCalls[0]).toMatchObject({ name: 'write', input: { path: 'notes.md', content } });
    expect(generation.message.toolCalls[0].inputError).toBeUndefined();
    expect(generation.message.content).toBe('');
  });

  it('wire (openai): a call without the <tool_call> opener (vLLM fallback_no_tags) is still a call', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-no-opener'));
    const generation = await qwen();
    expect(generation).toMatchObject({
      stopReason: 'tool_calls',
      message: { content: 'Checking.', toolCalls: [{ name: 'read_file', input: { path: 'src/index.ts' } }] },
    });
  });

  it('wire (openai): a missing </parameter> never merges two parameters: the call carries an inputError quoting the problem', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-missing-close-parameter'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call.name).toBe('write');
    expect(call.inputError).toMatch(
      /^the call to write could not be read exactly: <parameter=path> is not closed by <\/parameter> before "<parameter=content>/,
    );
  });

  it('wire (openai): a qwen3-coder call cut mid-parameter by finish_reason length is not run', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-cut-by-length'));
    const generation = await qwen();
    const [call] = generation.message.toolCalls;
    expect(call.inputError).toMatch(/<parameter=content> is not closed by <\/parameter> \(the text ends inside it\)/);
  });

  it('wire (openai): anyOf [integer, null] and oneOf [boolean, array] values are typed by the schema', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-anyof-oneof'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call).toMatchObject({ name: 'wait', input: { seconds: 30, loud: false } });
    expect(call.inputError).toBeUndefined();
  });

  it('wire (openai): nullable values — "null" for anyOf [integer, null] and for ["string","null"] is null, other text stays text', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-nullable.1'), wireFixture('openai', 'qwen3-coder-nullable.2'));
    expect((await qwen()).message.toolCalls[0]).toMatchObject({ input: { seconds: null, note: null } });
    expect((await qwen()).message.toolCalls[0]).toMatchObject({ input: { seconds: null, note: '42' } });
  });

  it("wire (openai): a value that fits no branch of anyOf stays text, for the session's schema check to tell the model", async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-no-anyof-branch'));
    const [call] = (await qwen()).message.toolCalls;
    expect(call.input).toEqual({ seconds: 'soon' });
    expect(call.inputError).toBeUndefined();
  });

  it('wire (openai): two qwen3-coder calls in one streamed answer are two calls, in order', async () => {
    replayer().replay(wireFixture('openai', 'qwen3-coder-two-calls'));
    expect((await qwen()).message.toolCalls.map((call) => call.input)).toEqual([{ path: 'a.ts' }, { path: 'b.ts' }]);
  });

  it('wire (openai): hermes {"name","arguments"} inside <tool_call>, streamed in deltas, is a call', async () => {
    replayer().replay(wireFixture('openai', 'hermes-call'));
    const generation = await qwen();
    expect(generation).toMatchObject({
      stopReason: 'tool_calls',
      message: { content: 'Let me look.', toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] },
    });
  });

  it('wire (openai): a hermes json string value holding a literal </tool_call> is kept', async () => {
    replayer().replay(wireFixture('openai', 'hermes-literal-close-tag'));
    expect((await qwen()).message.toolCalls[0]).toMatchObject({ name: 'write', input: { path: 'a', content: 'x </tool_call> y' } });
  });

  it('wire (openai): prose that only mentions <tool_call> or <function=name> stays the answer (no call)', async () => {
    const text = 'I would use <tool_call> here, and the format is <function=name> followed by parameters.';
    replayer().replay(wireFixture('openai', 'prose-mentions-tags'));
    expect(await qwen()).toMatchObject({ stopReason: 'end', message: { content: text, toolCalls: [] } });
  });

  it('wire (openai): native tool_calls win over <tool_call> text in the content (no double call)', async () => {
    replayer().replay(wireFixture('openai', 'native-over-text-call'));
    expect((await qwen()).message.toolCalls).toEqual([{ id: 'call_n', name: 'read_file', input: { path: 'native.ts' } }]);
  });
});

describeOverEachFetch('wire (anthropic): text and usage', () => {
  it('wire (anthropic): text in one-character text_delta events is joined exactly and streamed in order', async () => {
    const answer = 'Done — wrote 2 files.\n```ts\nconst a = "x";\n```';
    replayer().replay(wireFixture('anthropic', 'text-one-char-deltas'));
    const seen: string[] = [];
    const generation = await claude({ onTextDelta: (text) => seen.push(text) });
    expect(generation).toMatchObject({ stopReason: 'end', message: { content: answer, toolCalls: [] }, attempts: 1 });
    expect(seen.join('')).toBe(answer);
  });

  it('wire (anthropic): usage is read from message_start (input, cache_read, cache_creation) and message_delta (output)', async () => {
    replayer().replay(wireFixture('anthropic', 'usage-start-and-delta'));
    expect((await claude()).tokens).toEqual({ input: 21, output: 77, cache: { get: 15000, set: 340 } });
  });

  it('wire (anthropic): cumulative usage in message_delta (input and cache counts, as the API now sends) overrides message_start', async () => {
    replayer().replay(wireFixture('anthropic', 'usage-cumulative-delta'));
    expect((await claude()).tokens).toEqual({ input: 30, output: 12, cache: { get: 900, set: 5 } });
  });

  it('wire (anthropic): ping events before and between content events are skipped', async () => {
    replayer().replay(wireFixture('anthropic', 'ping-between-events'));
    expect((await claude()).message.content).toBe('Hello');
  });

  it('wire (anthropic): stop_sequence ends the answer (stopReason end) with the text before the sequence', async () => {
    replayer().replay(wireFixture('anthropic', 'stop-sequence'));
    expect(await claude()).toMatchObject({ stopReason: 'end', message: { content: 'answer: 42', toolCalls: [] } });
  });

  it('wire (anthropic): text present in content_block_start is kept before the deltas', async () => {
    replayer().replay(wireFixture('anthropic', 'text-in-block-start'));
    expect((await claude()).message.content).toBe('Prefix');
  });

  it('wire (anthropic): two text blocks are joined in index order', async () => {
    replayer().replay(wireFixture('anthropic', 'two-text-blocks'));
    expect((await claude()).message.content).toBe('First. Second.');
  });
});

describeOverEachFetch('wire (anthropic): framing, and blocks that are not local text', () => {
  it('wire (anthropic): unknown event types and an unknown content block with its own delta type are ignored', async () => {
    replayer().replay(wireFixture('anthropic', 'unknown-events-and-blocks'));
    expect(await claude()).toMatchObject({ stopReason: 'end', message: { content: 'kept', toolCalls: [] } });
  });

  it('wire (anthropic): citations_delta on a text block does not enter the text', async () => {
    replayer().replay(wireFixture('anthropic', 'citations-delta'));
    expect((await claude()).message.content).toBe('the sky is blue');
  });

  it('wire (anthropic): server_tool_use and web_search_tool_result blocks are not local tool calls; the text around them is the answer', async () => {
    replayer().replay(wireFixture('anthropic', 'server-tool-blocks'));
    expect(await claude()).toMatchObject({ stopReason: 'end', message: { content: 'Searching. Nothing found.', toolCalls: [] } });
  });

  it('wire (anthropic): CRLF line endings frame the same events as LF', async () => {
    replayer().replay(wireFixture('anthropic', 'crlf'));
    expect((await claude()).message.content).toBe('crlf framed');
  });

  it('wire (anthropic): event: and data: fields without the space after the colon, and comment lines, are read the same', async () => {
    replayer().replay(wireFixture('anthropic', 'fields-without-space-and-comments'));
    expect((await claude()).message.content).toBe('tight');
  });

  it('wire (anthropic): an event whose JSON is spread over several data: lines (SSE multi-line data) is read whole', async () => {
    expect(wireFixture('anthropic', 'multi-line-data')).toMatch(/content_block_delta",\ndata: /);
    replayer().replay(wireFixture('anthropic', 'multi-line-data'));
    expect((await claude()).message.content).toBe('multi-line');
  });

  it('wire (anthropic): multi-byte UTF-8 text (é, 中, 😀) cut between network reads arrives whole', async () => {
    const answer = 'résumé 漢字 👍🏽 end';
    const replay = await serveInBytePieces(wireFixture('anthropic', 'text-multi-byte'), insideMultiByte);
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
    replayer().replay(wireFixture('anthropic', 'input-split-in-strings'));
    const generation = await claude();
    expect(generation).toMatchObject({ stopReason: 'tool_calls', message: { toolCalls: [{ id: 'toolu_1', name: 'write', input }] } });
  });

  it('wire (anthropic): input split between a backslash and the quote it escapes (\\") is joined exactly', async () => {
    replayer().replay(wireFixture('anthropic', 'input-split-at-backslash'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'q.txt', content: 'he said "yes" then \\ left' });
  });

  it('wire (anthropic): input split in the middle of a \\u00e9 escape is joined exactly', async () => {
    replayer().replay(wireFixture('anthropic', 'input-split-in-unicode-escape'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'café.md', content: 'naïve' });
  });

  it('wire (anthropic): input split between the two escapes of a surrogate pair (\\ud83d|\\ude80) is joined exactly', async () => {
    replayer().replay(wireFixture('anthropic', 'input-split-between-surrogate-escapes'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'r.md', content: 'launch 🚀!' });
  });

  it('wire (anthropic): input split between the halves of a raw surrogate pair is joined exactly', async () => {
    // the first fragment's string ends with the high half of 😀 (a lone surrogate, which JSON carries as \ud83d)
    expect(wireFixture('anthropic', 'input-split-in-raw-surrogate-pair')).toContain('\\"x\\ud83d"}');
    replayer().replay(wireFixture('anthropic', 'input-split-in-raw-surrogate-pair'));
    expect((await claude()).message.toolCalls[0].input).toEqual({ path: 'p.md', content: 'x😀y 日本 ü' });
  });

  it('wire (anthropic): multi-byte UTF-8 in input_json_delta cut between network reads arrives whole', async () => {
    const input = { path: 'ñ.md', content: 'Grüße 🌍 世界' };
    const replay = await serveInBytePieces(wireFixture('anthropic', 'input-multi-byte'), insideMultiByte);
    try {
      expect((await claude({}, replay.urls)).message.toolCalls).toEqual([{ id: 'toolu_b', name: 'write', input }]);
    } finally {
      await replay.close();
    }
  });

  it('wire (anthropic): parallel tool_use blocks after text are separate calls, in block order', async () => {
    replayer().replay(wireFixture('anthropic', 'parallel-tool-use'));
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
    replayer().replay(wireFixture('anthropic', 'tool-use-no-deltas'));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_e', name: 'list_todos', input: {} }]);
  });

  it('wire (anthropic): a tool_use whose whole input arrives in content_block_start (no deltas, as some gateways send) keeps that input', async () => {
    replayer().replay(wireFixture('anthropic', 'tool-use-input-in-block-start'));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_pre', name: 'read_file', input: { path: 'pre.ts' } }]);
  });

  it('wire (anthropic): a tool_use with one empty partial_json is a call with input {}', async () => {
    replayer().replay(wireFixture('anthropic', 'tool-use-one-empty-delta'));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_e2', name: 'list_todos', input: {} }]);
  });

  it('wire (anthropic): ping events between input_json_delta events do not disturb the input', async () => {
    replayer().replay(wireFixture('anthropic', 'ping-between-input-deltas'));
    expect((await claude()).message.toolCalls).toEqual([{ id: 'toolu_p', name: 'read_file', input: { path: 'ping.ts' } }]);
  });

  it('wire (anthropic): input that does not fit the schema reaches the loop as sent, for the session to check', async () => {
    replayer().replay(wireFixture('anthropic', 'input-off-schema'));
    const [call] = (await claude()).message.toolCalls;
    expect(call).toMatchObject({ id: 'toolu_x', name: 'read_file', input: { path: 42 } });
    expect(call.inputError).toBeUndefined();
  });
});

describeOverEachFetch('wire (anthropic): errors mid-stream', () => {
  it('wire (anthropic): an overloaded_error event after message_start fails the attempt; the retry answers and the text resets', async () => {
    replayer().replay(wireFixture('anthropic', 'overloaded-then-retry.1'), wireFixture('anthropic', 'overloaded-then-retry.2'));
    const seen: string[] = [];
    let resets = 0;
    const generation = await claude({ onTextDelta: (text) => seen.push(text), onTextReset: () => (resets += 1) });
    expect(generation).toMatchObject({ message: { content: 'whole answer' }, attempts: 2 });
    expect(replayer().requests).toHaveLength(2);
    expect(resets).toBe(1);
    expect(seen).toEqual(['partial', 'whole answer']);
  });

  it('wire (anthropic): overloaded_error on every attempt ends in a typed error naming the supplier and the overload', async () => {
    replayer().replay(
      wireFixture('anthropic', 'overloaded-every-attempt'),
      wireFixture('anthropic', 'overloaded-every-attempt'),
      wireFixture('anthropic', 'overloaded-every-attempt'),
    );
    await expect(claude()).rejects.toMatchObject({
      name: 'SupplierUnavailableError',
      message: expect.stringMatching(
        /^claude\/haiku failed 3 times in a row \(last: .*"overloaded_error".*\); the supplier is unreachable or overloaded/,
      ),
    });
    expect(replayer().requests).toHaveLength(3);
  });

  it('wire (anthropic): a stream that ends without message_stop is retried, not taken as a whole answer', async () => {
    replayer().replay(wireFixture('anthropic', 'cut-before-message-stop.1'), wireFixture('anthropic', 'cut-before-message-stop.2'));
    expect(await claude()).toMatchObject({ message: { content: 'complete' }, attempts: 2 });
  });
});

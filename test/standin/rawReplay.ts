// Raw replay: a tiny server beside the stand-in that answers each model request with a given SSE body, byte for byte.
// For stream shapes the scripted stand-in cannot produce (refusals, cut-off tool calls, reused tool-call indexes,
// replayed calls): the body is written exactly as given, so the real SDKs parse what a vendor would have sent.
import { createServer, type IncomingMessage } from 'node:http';

import { listenOnLoopback } from './listenOnLoopback.js';

/** .what = one request the replay server received: which protocol path, and its parsed JSON body */
export interface RawReplayRequest {
  protocol: 'anthropic' | 'openai';
  path: string;
  body: any;
}

/** .what = a running raw-replay server: where to point the SDKs (or the CLI), what to serve next, what it received */
export interface RawReplay {
  /** "http://127.0.0.1:PORT": the Anthropic SDK baseURL (no /v1) */
  url: string;
  /** url + "/v1": the OpenAI SDK baseURL */
  openaiUrl: string;
  /** queue SSE bodies: each is served verbatim (text/event-stream) to the next POST /v1/messages or /v1/chat/completions */
  replay(...bodies: string[]): void;
  /** bodies not served yet */
  pending(): number;
  /** every model request received, in order */
  requests: RawReplayRequest[];
  /** clear the queue and the requests */
  reset(): void;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
};

/**
 * .what = starts a raw-replay server on 127.0.0.1 (random port)
 * .note = an empty queue answers 400 in the protocol's error shape (SDKs do not retry a 400), naming the request
 */
export const startRawReplay = async (): Promise<RawReplay> => {
  const queue: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      const text = await readBody(req);
      const protocol = path === '/v1/messages' ? 'anthropic' : path === '/v1/chat/completions' ? 'openai' : null;
      if (req.method !== 'POST' || !protocol) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `raw replay: no route ${req.method} ${path}` } }));
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      replay.requests.push({ protocol, path, body });
      const next = queue.shift();
      if (next === undefined) {
        const message = `raw replay: no body queued for request #${replay.requests.length} (${path})`;
        const error =
          protocol === 'anthropic'
            ? { type: 'error', error: { type: 'invalid_request_error', message } }
            : { error: { message, type: 'invalid_request_error', param: null, code: null } };
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(error));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.end(Buffer.from(next, 'utf8'));
    })().catch((error: Error) => res.destroy(error));
  });
  const { url, close } = await listenOnLoopback(server);
  const replay: RawReplay = {
    url,
    openaiUrl: `${url}/v1`,
    replay: (...bodies) => void queue.push(...bodies),
    pending: () => queue.length,
    requests: [],
    reset: () => {
      queue.length = 0;
      replay.requests.length = 0;
    },
    close,
  };
  return replay;
};

/** .what = an Anthropic SSE body from events, as the API frames them (`event: <type>` then `data: <json>`) */
export const anthropicSse = (events: ReadonlyArray<{ type: string } & Record<string, unknown>>): string =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');

/** .what = an OpenAI SSE body from chat.completion.chunk payloads, ended by `data: [DONE]` */
export const openaiSse = (chunks: ReadonlyArray<Record<string, unknown>>): string =>
  [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'].join('');

/**
 * .what = the events of one Anthropic message: message_start, the given content events, message_delta with the stop
 *         reason, message_stop
 * .why = fixtures state only what they prove (the blocks and the stop reason); the frame around them is the API's
 */
export const anthropicMessageEvents = (input: {
  content: ReadonlyArray<{ type: string } & Record<string, unknown>>;
  stopReason: string;
  model?: string;
}) => [
  {
    type: 'message_start',
    message: {
      id: 'msg_replay01',
      type: 'message',
      role: 'assistant',
      model: input.model ?? 'claude-haiku-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  },
  ...input.content,
  { type: 'message_delta', delta: { stop_reason: input.stopReason, stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: 'message_stop' },
];

/**
 * .what = chat.completion.chunk payloads around the given deltas: each delta one chunk, then the finish reason, then usage
 * .why = as a vLLM / DashScope stream with stream_options.include_usage sends them
 */
export const openaiChunks = (input: { deltas: ReadonlyArray<Record<string, unknown>>; finishReason: string; model?: string }) => {
  const frame = { id: 'chatcmpl-replay01', object: 'chat.completion.chunk', created: 1_700_000_000, model: input.model ?? 'qwen-plus' };
  return [
    { ...frame, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    ...input.deltas.map((delta) => ({ ...frame, choices: [{ index: 0, delta, finish_reason: null }] })),
    { ...frame, choices: [{ index: 0, delta: {}, finish_reason: input.finishReason }] },
    { ...frame, choices: [], usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } },
  ];
};

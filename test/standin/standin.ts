// The LLM stand-in: a local HTTP server speaking the Anthropic Messages and OpenAI Chat Completions APIs, scripted by tests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { cutTurn, randomId, toAnswer, type AnswerTurn, type StreamPlan } from './answer.js';
import {
  anthropicErrorBody,
  anthropicInvalidStream,
  anthropicMessage,
  anthropicOverflowMessage,
  anthropicStream,
  anthropicTokenCount,
} from './anthropic.js';
import { openaiCompletion, openaiErrorBody, openaiInvalidStream, openaiOverflowMessage, openaiRejection, openaiStream } from './openai.js';
import { anthropicPromptParts, openaiPromptParts, promptTokens, PromptCache } from './cache.js';
import { listenOnLoopback } from './listenOnLoopback.js';
import type { Standin, StandinOptions, StandinRequest, StandinTurn, StandinUsage } from './types.js';

/** The public types, re-exported so callers import everything from standin.js. */
export type { Standin, StandinOptions, StandinRequest, StandinToolCall, StandinTurn, StandinUsage } from './types.js';

/** Context limit quoted by a scripted `contextOverflow` turn when no contextLimitTokens option is set. */
const DEFAULT_CONTEXT_LIMIT = { anthropic: 200_000, openai: 128_000 } as const;

/** One HTTP exchange: knows whether the client went away, and can wait without outliving it. */
class Exchange {
  gone = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    res.on('close', () => {
      if (!res.writableFinished) this.gone = true;
    });
  }

  /** Wait `ms`; resolves false (early) when the client disconnects. */
  pause(ms: number): Promise<boolean> {
    if (this.gone) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onClose = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.res.off('close', onClose);
        resolve(!this.gone);
      }, ms);
      this.res.once('close', onClose);
    });
  }

  /** Send a complete JSON (or raw string) response. */
  json(status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    this.res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    this.res.end(text);
  }

  /** Resolves when the client disconnects (or the server closes the socket); no timer, so it never keeps a process alive. */
  untilGone(): Promise<void> {
    if (this.gone || this.res.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.res.once('close', () => resolve()));
  }

  /** Send a JSON body but stop after half of it: destroy the socket (a non-streaming `cut`), or hold it open (`stall`). */
  async jsonCut(body: unknown, headers: Record<string, string>, stall = false): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(body));
    this.res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length, ...headers });
    await this.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
    if (stall) return this.untilGone();
    this.res.socket?.destroy();
  }

  /**
   * Send SSE frames, as a model with no latency has them: all at once, in one write, so they reach the client in as few
   * reads as the socket makes (pacing each frame by its flush made every frame a read of its own, and the harness under
   * test paid per frame what a real model's generation time hides). With plan.cutAfter, the frames up to that one are
   * sent and the socket is destroyed once they are flushed, or (stall) nothing more is sent and the socket is held open
   * until the client gives up (close() destroys it too, so a stall never outlives the server).
   */
  async sse(plan: StreamPlan, headers: Record<string, string>, stall = false): Promise<void> {
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
    if (plan.cutAfter === undefined) {
      this.res.end(plan.frames.join(''));
      return;
    }
    await this.write(plan.frames.slice(0, plan.cutAfter + 1).join(''));
    if (stall) return this.untilGone();
    this.res.socket?.destroy();
  }

  private write(chunk: string | Uint8Array): Promise<void> {
    return new Promise((resolve) => this.res.write(chunk, () => resolve()));
  }
}

/** What one protocol needs from the server: auth, errors, token parts, and encoding an answer with cache accounting. */
interface Wire {
  protocol: 'anthropic' | 'openai';
  requestIdHeader(): Record<string, string>;
  authorized(req: IncomingMessage, apiKey: string): boolean;
  unauthorized(): { status: number; body: unknown };
  error(status: number, message: string): unknown;
  overflow(tokens: number, limit: number): unknown;
  tokens(body: any): number;
  /** the 400 body the real API answers a request its model does not take (a parameter it refuses), or null */
  reject?(body: any): unknown;
  encode(turn: AnswerTurn, body: any, stream: boolean, cut: boolean): { usage: StandinUsage; json: unknown; plan: StreamPlan | null };
  invalidStream(): StreamPlan;
}

const anthropicWire = (cache: PromptCache): Wire => ({
  protocol: 'anthropic',
  requestIdHeader: () => ({ 'request-id': randomId('req_011C') }),
  authorized: (req, apiKey) => req.headers['x-api-key'] === apiKey || req.headers.authorization === `Bearer ${apiKey}`,
  unauthorized: () => ({ status: 401, body: anthropicErrorBody(401, 'invalid x-api-key', randomId('req_011C')) }),
  error: (status, message) => anthropicErrorBody(status, message, randomId('req_011C')),
  overflow: (tokens, limit) => anthropicErrorBody(400, anthropicOverflowMessage(tokens, limit), randomId('req_011C')),
  tokens: (body) => promptTokens(anthropicPromptParts(body)),
  encode: (turn, body, stream, cut) => {
    const model = String(body?.model ?? 'standin');
    const split = cache.anthropic(model, anthropicPromptParts(body));
    const answer = toAnswer(turn, 'toolu_01');
    const usage = {
      input: split.input,
      output: answer.outputTokens,
      cacheRead: split.cacheRead,
      cacheWrite: split.cacheWrite,
      cacheWrite1h: split.cacheWrite1h,
    };
    return {
      usage: { input: usage.input, output: usage.output, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite },
      json: stream ? null : anthropicMessage(answer, model, usage),
      plan: stream ? anthropicStream(answer, model, usage, cut) : null,
    };
  },
  invalidStream: anthropicInvalidStream,
});

const openaiWire = (cache: PromptCache): Wire => ({
  protocol: 'openai',
  requestIdHeader: () => ({ 'x-request-id': `req_${randomBytes(16).toString('hex')}` }),
  authorized: (req, apiKey) => req.headers.authorization === `Bearer ${apiKey}`,
  unauthorized: () => ({
    status: 401,
    body: openaiErrorBody(401, 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.'),
  }),
  error: (status, message) => openaiErrorBody(status, message),
  overflow: (tokens, limit) => openaiErrorBody(400, openaiOverflowMessage(tokens, limit), 'context_length_exceeded', 'messages'),
  tokens: (body) => promptTokens(openaiPromptParts(body)),
  reject: openaiRejection,
  encode: (turn, body, stream, cut) => {
    const model = String(body?.model ?? 'standin');
    const split = cache.openai(model, openaiPromptParts(body));
    const answer = toAnswer(turn, 'call_');
    const usage = {
      prompt: split.prompt,
      cached: split.cached,
      completion: answer.outputTokens + answer.reasoningTokens,
      reasoning: answer.reasoningTokens,
    };
    const includeUsage = body?.stream_options?.include_usage === true;
    return {
      usage: {
        input: usage.prompt,
        output: usage.completion,
        cacheRead: usage.cached,
        cacheWrite: 0,
        ...(usage.reasoning ? { reasoning: usage.reasoning } : {}),
      },
      json: stream ? null : openaiCompletion(answer, model, usage),
      plan: stream ? openaiStream(answer, model, usage, includeUsage, cut) : null,
    };
  },
  invalidStream: openaiInvalidStream,
});

/** Read a request body as UTF-8 text. */
const readBody = async (req: IncomingMessage): Promise<string> => {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
};

const parseJson = (text: string): { ok: true; value: any } | { ok: false } => {
  try {
    return { ok: true, value: text === '' ? {} : JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

/** Start a stand-in on 127.0.0.1 at a random port. */
export const startStandin = async (options: StandinOptions = {}): Promise<Standin> => {
  const cache = new PromptCache(options.cacheMinTokens ?? 1024);
  const wires = { anthropic: anthropicWire(cache), openai: openaiWire(cache) };
  const queue: StandinTurn[] = [];
  let closeServer: () => Promise<void> = async () => {};

  const standin: Standin = {
    url: '',
    openaiUrl: '',
    respond: null,
    requests: [],
    script: (...turns) => void queue.push(...turns),
    pending: () => queue.length,
    reset: () => {
      queue.length = 0;
      standin.requests.length = 0;
      standin.respond = null;
      cache.clear();
    },
    close: () => closeServer(),
  };

  /** Serve one turn on a model route (recursing through `delayMs`). */
  const serve = async (ex: Exchange, wire: Wire, record: StandinRequest, turn: StandinTurn): Promise<void> => {
    const headers = wire.requestIdHeader();
    if ('delayMs' in turn) {
      if (await ex.pause(turn.delayMs)) await serve(ex, wire, record, turn.then);
      return;
    }
    if ('error' in turn) {
      const { status, message, retryAfterSeconds, retryAfterMs } = turn.error;
      if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
      if (retryAfterMs !== undefined) headers['retry-after-ms'] = String(retryAfterMs);
      return ex.json(status, wire.error(status, message ?? `stand-in: scripted HTTP ${status}`), headers);
    }
    if ('contextOverflow' in turn) {
      const limit = options.contextLimitTokens ?? DEFAULT_CONTEXT_LIMIT[wire.protocol];
      return ex.json(400, wire.overflow(Math.max(wire.tokens(record.body), limit + 1), limit), headers);
    }
    if ('reset' in turn) {
      ex.req.socket.resetAndDestroy();
      return;
    }
    if ('invalidBody' in turn) {
      return record.stream ? ex.sse(wire.invalidStream(), headers) : ex.json(200, 'not json{', headers);
    }
    if (!('cut' in turn) && !('stall' in turn) && !('text' in turn) && !('toolCalls' in turn) && !('refusal' in turn)) {
      return ex.json(400, wire.error(400, `stand-in: unknown turn kind ${JSON.stringify(turn)}`), headers);
    }
    // a stall sends the same first half as a cut, then holds the connection open instead of destroying it
    const stall = 'stall' in turn;
    const cut = 'cut' in turn || stall;
    const answerTurn: AnswerTurn = 'cut' in turn ? cutTurn(turn.cut) : 'stall' in turn ? cutTurn(turn.stall) : turn;
    const encoded = wire.encode(answerTurn, record.body, record.stream, cut);
    record.usage = encoded.usage;
    if (encoded.plan) return ex.sse(encoded.plan, headers, stall);
    return cut ? ex.jsonCut(encoded.json, headers, stall) : ex.json(200, encoded.json, headers);
  };

  /** Handle POST /v1/messages and /v1/chat/completions: record, check auth and context, pick a turn, answer. */
  const model = async (ex: Exchange, wire: Wire, base: Pick<StandinRequest, 'method' | 'path' | 'query' | 'headers'>, body: any) => {
    const record: StandinRequest = { protocol: wire.protocol, ...base, body, stream: body?.stream === true, usage: null, at: Date.now() };
    standin.requests.push(record);
    const number = standin.requests.length;
    let turn: StandinTurn | undefined;
    let refusal: { status: number; body: unknown } | undefined;
    if (options.apiKey !== undefined && !wire.authorized(ex.req, options.apiKey)) {
      refusal = wire.unauthorized();
    } else if (options.contextLimitTokens !== undefined && wire.tokens(body) > options.contextLimitTokens) {
      refusal = { status: 400, body: wire.overflow(wire.tokens(body), options.contextLimitTokens) };
    } else if (wire.reject?.(body)) {
      refusal = { status: 400, body: wire.reject(body) };
    } else {
      turn = standin.respond?.(record) ?? queue.shift();
      if (!turn) refusal = { status: 400, body: wire.error(400, `stand-in: no scripted turn left for request #${number} (${base.path})`) };
    }
    if (!(await ex.pause(options.latencyMs ?? 0))) return;
    if (refusal) return ex.json(refusal.status, refusal.body, wire.requestIdHeader());
    await serve(ex, wire, record, turn!);
  };

  /** Handle /__standin/* so another process can script the stand-in and read what it received. */
  const control = (ex: Exchange, method: string, path: string, body: any) => {
    if (method === 'POST' && path === '/__standin/script') {
      standin.script(...(Array.isArray(body) ? body : [body]));
      return ex.json(200, { pending: queue.length });
    }
    if (method === 'GET' && path === '/__standin/requests') return ex.json(200, standin.requests);
    if (method === 'POST' && path === '/__standin/reset') {
      standin.reset();
      return ex.json(200, { ok: true });
    }
    return ex.json(404, { error: { type: 'not_found_error', message: `stand-in: no control route ${method} ${path}` } });
  };

  const handle = async (ex: Exchange): Promise<void> => {
    const method = ex.req.method ?? 'GET';
    const url = new URL(ex.req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const parsed = parseJson(await readBody(ex.req));
    const body = parsed.ok ? parsed.value : undefined;
    if (path.startsWith('/__standin/')) {
      if (!parsed.ok) return ex.json(400, { error: { type: 'invalid_request_error', message: 'stand-in: body is not JSON' } });
      return control(ex, method, path, body);
    }
    const route =
      method !== 'POST'
        ? undefined
        : path === '/v1/messages'
          ? 'messages'
          : path === '/v1/messages/count_tokens'
            ? 'count_tokens'
            : path === '/v1/chat/completions'
              ? 'chat'
              : undefined;
    const wire = route === 'chat' || /^\/v1\/(chat|completions|responses|embeddings)/.test(path) ? wires.openai : wires.anthropic;
    if (!route) {
      if (!(await ex.pause(options.latencyMs ?? 0))) return;
      return ex.json(404, wire.error(404, `stand-in: no route for ${method} ${path}`), wire.requestIdHeader());
    }
    if (!parsed.ok) return ex.json(400, wire.error(400, 'stand-in: request body is not valid JSON'), wire.requestIdHeader());
    if (route === 'count_tokens') {
      if (!(await ex.pause(options.latencyMs ?? 0))) return;
      if (options.apiKey !== undefined && !wire.authorized(ex.req, options.apiKey)) {
        const refusal = wire.unauthorized();
        return ex.json(refusal.status, refusal.body, wire.requestIdHeader());
      }
      return ex.json(200, anthropicTokenCount(wire.tokens(body)), wire.requestIdHeader());
    }
    const query = Object.fromEntries(url.searchParams);
    await model(ex, wire, { method, path, query, headers: { ...ex.req.headers } }, body);
  };

  const server = createServer((req, res) => {
    const ex = new Exchange(req, res);
    handle(ex).catch((error: unknown) => {
      if (!res.headersSent) ex.json(500, { error: { type: 'api_error', message: `stand-in: ${String(error)}` } });
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server);
  closeServer = listening.close;
  standin.url = listening.url;
  standin.openaiUrl = `${standin.url}/v1`;
  return standin;
};

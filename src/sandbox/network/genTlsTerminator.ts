import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

import type { RunCertificateAuthority } from './genRunCertificateAuthority.js';

/** how long a client has, from the proxy's 200, to finish its TLS handshake */
const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * .what = the TLS end of the tunnels the proxy opens to masked hosts: `terminate` answers a CONNECT, completes the
 *         client's handshake with the run CA's leaf for the tunnel's host (ALPN http/1.1 only), and hands each request
 *         read from it (node's HTTP/1.1 parser, with its header size bound) to `onRequest` with the tunnel it came through
 * .why = a masked value can be written into a request only where the proxy reads the request: inside the TLS the client
 *        opened. The TLS runs in this process on the tunnel's own socket, and its parser is a server that never listens,
 *        so no other process can reach the plaintext side
 */
export const genTlsTerminator = <TTunnel extends { host: string }>(
  input: { ca: RunCertificateAuthority },
  context: { onRequest: (tunnel: TTunnel, request: IncomingMessage, response: ServerResponse) => void },
) => {
  const tunnels = new WeakMap<Socket, TTunnel>();
  // a request's body streams (a git push may take longer than any fixed deadline): no request timeout, as the proxy's own
  const server = createServer({ requestTimeout: 0 }, (request, response) => {
    const tunnel = tunnels.get(request.socket);
    if (tunnel) context.onRequest(tunnel, request, response);
    else response.destroy();
  });
  // a request that does not parse (or a reset) ends its own tunnel, and nothing else
  server.on('clientError', (_error, socket: Socket) => socket.destroy());
  return {
    /** answers the CONNECT on `client` with 200 and serves the tunnel's TLS; `head` is what the client sent after it */
    terminate: (client: Socket, head: Buffer, tunnel: TTunnel): void => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      const deadline = setTimeout(() => client.destroy(), HANDSHAKE_TIMEOUT_MS);
      client.once('close', () => clearTimeout(deadline));
      input.ca.leafFor(tunnel.host).then(
        ({ secureContext }) => {
          if (client.destroyed) return;
          if (head.length) client.unshift(head);
          const tls = new TLSSocket(client, { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
          tls.on('error', () => client.destroy());
          tls.once('secure', () => clearTimeout(deadline));
          client.once('close', () => tls.destroy());
          tunnels.set(tls, tunnel);
          server.emit('connection', tls);
        },
        () => client.destroy(),
      );
    },
  };
};

import type { lookup as dnsLookup } from 'node:dns';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';

import { matchAllowedDomain } from './allowedDomains.js';
import type { MaskedCredential } from './genMaskedCredentials.js';
import { genRunCertificateAuthority } from './genRunCertificateAuthority.js';
import { genTlsTerminator } from './genTlsTerminator.js';
import { unmaskHeaders } from './unmaskHeaders.js';

/** upstream connections the proxy keeps open per host between requests, for the next tunnel's */
const MAX_FREE_UPSTREAM_SOCKETS = 4;

/** .what = a tunnel to a masked host, as the proxy's routing decided it: the host, its checked lookup, the port */
interface MaskedTunnel {
  host: string;
  lookup: typeof dnsLookup;
  port: number;
}

/** .what = what the proxy sends upstream for a request read inside a terminated tunnel (the proxy's forwardRequest takes it) */
interface MaskedUpstreamTarget extends MaskedTunnel {
  path: string;
  authority: string;
  agent: HttpsAgent;
  rewrite: (headers: OutgoingHttpHeaders) => OutgoingHttpHeaders;
}

/**
 * .what = the masking of a domain proxy, as its callers see it: the credentials (placeholders, hosts) and the run CA's
 *         certificate the sandbox must trust
 */
export interface ProxyMasking {
  readonly credentials: readonly MaskedCredential[];
  readonly caCertPem: string;
  /** whether a CONNECT to this host is terminated (a credential is masked for it) */
  masks: (host: string) => boolean;
  /** answers such a CONNECT and serves its requests, each with the masked values written into its headers */
  terminate: (client: Socket, head: Buffer, tunnel: MaskedTunnel) => void;
  /** cuts the kept upstream connections */
  close: () => void;
}

/**
 * .what = the origin-form target of a request read inside a tunnel: an absolute-form one reduced to its path and query
 *         (its authority is ignored: the tunnel's host is where it goes), anything else as sent
 */
const originFormOf = (target: string): string => {
  if (target.startsWith('/') || target === '*') return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return target;
  }
};

/**
 * .what = starts a proxy's masking: the run's CA, the TLS end of the masked hosts' tunnels, and one keep-alive agent for
 *         their upstream connections (each verified with node's CAs, which honour NODE_EXTRA_CA_CERTS)
 * .why = a masked credential's value is written into a request only over TLS, only to a host named for it; a host no
 *        credential is masked for keeps a plain tunnel, which the proxy never reads
 * .note = a request to a masked host's tunnel always goes to that host, whatever its Host header or absolute-form target
 *         names (the proxy sets Host from the tunnel); a placeholder of a credential not masked for the host is sent as it is
 */
export const startProxyMasking = async (
  input: { credentials: readonly MaskedCredential[] },
  context: {
    forward: (target: MaskedUpstreamTarget, request: IncomingMessage, response: ServerResponse) => void;
    /** the CAs upstream certificates are verified with; default node's own */
    upstreamCa?: string | readonly string[];
  },
): Promise<ProxyMasking> => {
  const ca = await genRunCertificateAuthority();
  const agent = new HttpsAgent({
    keepAlive: true,
    maxFreeSockets: MAX_FREE_UPSTREAM_SOCKETS,
    ...(context.upstreamCa ? { ca: [context.upstreamCa].flat() } : {}),
  });
  const credentialsFor = (host: string) => input.credentials.filter((credential) => matchAllowedDomain(host, credential.hosts));
  const terminator = genTlsTerminator<MaskedTunnel>(
    { ca },
    {
      onRequest: (tunnel, request, response) => {
        const credentials = credentialsFor(tunnel.host);
        const rewrite = (headers: OutgoingHttpHeaders): OutgoingHttpHeaders => {
          // the client was answered 100 Continue by the proxy's parser already
          delete headers.expect;
          return unmaskHeaders(headers, credentials);
        };
        const authority = `${tunnel.host.includes(':') ? `[${tunnel.host}]` : tunnel.host}${tunnel.port === 443 ? '' : `:${tunnel.port}`}`;
        context.forward({ ...tunnel, path: originFormOf(request.url ?? '/'), authority, agent, rewrite }, request, response);
      },
    },
  );
  return {
    credentials: input.credentials,
    caCertPem: ca.certPem,
    masks: (host) => credentialsFor(host).length > 0,
    terminate: terminator.terminate,
    close: () => agent.destroy(),
  };
};

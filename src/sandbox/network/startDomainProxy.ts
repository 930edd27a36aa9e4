import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { BlockList, connect, type Server as NetServer, type Socket } from 'node:net';

import { BadRequestError } from '../../core/contract/errors.js';
import { checkDomainPattern, matchAllowedDomain, normalizeDomainPattern, normalizeHost } from './allowedDomains.js';
import type { MaskedCredential } from './genMaskedCredentials.js';
import type { ProxyMasking } from './startProxyMasking.js';

/** connections the proxy serves at once; past it, a new one is closed at once */
const MAX_CONNECTIONS = 256;

/** distinct hosts an audit list keeps; past it, new hosts are counted together, so a command cannot grow it unbounded */
const MAX_AUDIT_HOSTS = 1_000;

/** the audit entry that counts the hosts past MAX_AUDIT_HOSTS */
const OTHER_HOSTS = '(other hosts)';

/** .what = how the proxy resolves a host name: dns.lookup's signature (a test gives its own, the proxy checks the addresses) */
export type HostLookup = typeof dnsLookup;

/** .what = a host the proxy served or refused, and how many requests (an HTTP request or a CONNECT tunnel each) */
export interface NetworkHost {
  host: string;
  requests: number;
}

/**
 * .what = where bash went through the proxy: the patterns it enforced, the hosts it forwarded to, the hosts it refused
 * .why = a CI job audits where its agent went (--output json's `network`)
 */
export interface NetworkAudit {
  allowedDomains: string[];
  hosts: NetworkHost[];
  denied: NetworkHost[];
}

/**
 * .what = the proxy, outside the sandbox, through which sandboxed bash reaches the allowed domains and nothing else
 * .why = the sandbox has no network of its own (--unshare-net); the listening socket its forwarder made on its loopback,
 *        and handed to the proxy, is its only way out
 */
export interface DomainProxy {
  readonly allowedDomains: readonly string[];
  /** accepts the connections of a listening socket (a sandbox's 127.0.0.1:3128), until it or the proxy is closed */
  serve: (listener: NetServer) => void;
  /** with masked credentials: their placeholders and the run's CA, which the sandbox must trust; else null */
  readonly masking: Pick<ProxyMasking, 'credentials' | 'caCertPem'> | null;
  audit: () => NetworkAudit;
  /** a point in the proxy's refusals; deniedSince(it) names the hosts refused after it (the note a bash call ends with) */
  mark: () => number;
  deniedSince: (mark: number) => string[];
  /** stops serving every listener, cuts every connection */
  close: () => Promise<void>;
}

// addresses a name allowed only by a wildcard may not lead to: the host's own loopback, link-local ones (cloud metadata
// services answer at 169.254.169.254), the unspecified ones. Someone else may own a subdomain, and point it there
const GUARDED_ADDRESSES = new BlockList();
GUARDED_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4');
GUARDED_ADDRESSES.addSubnet('169.254.0.0', 16, 'ipv4');
GUARDED_ADDRESSES.addSubnet('0.0.0.0', 8, 'ipv4');
GUARDED_ADDRESSES.addAddress('::1', 'ipv6');
GUARDED_ADDRESSES.addAddress('::', 'ipv6');
GUARDED_ADDRESSES.addSubnet('fe80::', 10, 'ipv6');
GUARDED_ADDRESSES.addSubnet('::ffff:0:0', 96, 'ipv6');

/** .what = a refusal the client reads: its HTTP status, and why (naming the host) */
interface Refusal {
  status: 400 | 403 | 502;
  reason: string;
}

/** an error of the checked lookup: the name resolved to an address it may not reach */
class GuardedAddressError extends Error {}

// request and response headers that belong to one hop, never passed on (RFC 9110 7.6.1), and the proxy's own
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** .what = the headers of a message without its hop-by-hop ones (and those its Connection header names) */
const endToEndHeaders = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase()),
  );
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name) && !named.has(name)));
};

/** .what = a CONNECT target, `host:port` or `[v6]:port`, or null when it is not one */
const parseAuthority = (authority: string): { host: string; port: number } | null => {
  const found = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(authority);
  const port = Number(found?.[2]);
  return found && port >= 1 && port <= 65535 ? { host: found[1], port } : null;
};

/** .what = counts per host, in the order first seen, capped at MAX_AUDIT_HOSTS distinct hosts */
const genHostCounts = () => {
  const counts = new Map<string, number>();
  return {
    add: (host: string): void => {
      const key = counts.has(host) || counts.size < MAX_AUDIT_HOSTS ? host : OTHER_HOSTS;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    },
    list: (): NetworkHost[] => [...counts].map(([host, requests]) => ({ host, requests })),
  };
};

/** .what = what the proxy counts: the hosts it reached, those it refused, and when it last refused each */
const genProxyAudit = (allowedDomains: readonly string[]) => {
  const hosts = genHostCounts();
  const denied = genHostCounts();
  // the latest refusal of each host, by sequence number, for deniedSince
  const refusedAt = new Map<string, number>();
  let refusals = 0;
  const allowedText = allowedDomains.join(', ');
  return {
    reached: (host: string): void => hosts.add(host),
    /** counts a refusal, and the 403 that says why and what is allowed */
    refuse: (host: string, why: string): Refusal => {
      denied.add(host);
      if (refusedAt.has(host) || refusedAt.size < MAX_AUDIT_HOSTS) refusedAt.set(host, ++refusals);
      return {
        status: 403,
        reason: `bhrain: ${host} ${why}: the sandbox's network reaches only ${allowedText} (--allow-domain, network.allowedDomains). Ask the user to allow it; retrying will not help.`,
      };
    },
    audit: (): NetworkAudit => ({ allowedDomains: [...allowedDomains], hosts: hosts.list(), denied: denied.list() }),
    mark: (): number => refusals,
    deniedSince: (mark: number): string[] => [...refusedAt].filter(([, at]) => at > mark).map(([host]) => host),
  };
};

/** .what = the proxy's audit, as genProxyAudit makes it */
type ProxyAudit = ReturnType<typeof genProxyAudit>;

/** .what = how the proxy routes one host: where it may connect (through a checked lookup), or its refusal */
interface ProxyRouting {
  decide: (rawHost: string) => { host: string; lookup: HostLookup } | Refusal;
  /** the refusal for a failed upstream connection: a guarded address is a denial, anything else a bad gateway */
  upstreamFailure: (host: string, error: Error) => Refusal;
  reached: (host: string) => void;
}

/** .what = the routing of the allowed domains: a lookup that lets a wildcard's name reach unguarded addresses only */
const genProxyRouting = (allowedDomains: readonly string[], baseLookup: HostLookup, audit: ProxyAudit): ProxyRouting => {
  const guarded = (address: string, family: number): boolean => GUARDED_ADDRESSES.check(address, family === 6 ? 'ipv6' : 'ipv4');
  const decide = (rawHost: string): { host: string; lookup: HostLookup } | Refusal => {
    const host = normalizeHost(rawHost);
    const match = matchAllowedDomain(host, allowedDomains);
    if (!match) return audit.refuse(host, 'is not an allowed domain');
    // an address in the request is looked up by nobody: only an exact pattern allows one (matchAllowedDomain)
    const lookup = ((
      hostname: string,
      options: { all?: boolean },
      callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
    ) =>
      baseLookup(hostname, { ...options, all: true }, (error, found) => {
        if (error) return callback(error, '', 0);
        const addresses = (found as unknown as LookupAddress[]).filter((each) => match.exact || !guarded(each.address, each.family));
        if (!addresses.length)
          return callback(
            new GuardedAddressError(
              `${host} resolves only to loopback or link-local addresses, which a name allowed only by the wildcard ${match.pattern} may not reach: allow it by its exact name`,
            ),
            '',
            0,
          );
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      })) as unknown as HostLookup;
    return { host, lookup };
  };
  const upstreamFailure = (host: string, error: Error): Refusal => {
    if (error instanceof GuardedAddressError) return audit.refuse(host, `was refused (${error.message})`);
    return { status: 502, reason: `bhrain: the proxy could not reach ${host}: ${(error as NodeJS.ErrnoException).code ?? error.message}` };
  };
  return { decide, upstreamFailure, reached: audit.reached };
};

/** .what = answers a proxy request with a refusal (or cuts it, when its answer has begun) */
const answerRequest = (response: ServerResponse, refusal: Refusal): void => {
  if (response.headersSent) return void response.destroy();
  response.writeHead(refusal.status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-bhrain-proxy': refusal.status === 403 ? 'denied' : 'error',
    connection: 'close',
  });
  response.end(`${refusal.reason}\n`);
};

/** .what = where a request goes: the host as routing decided it, and what is sent there */
interface UpstreamTarget {
  host: string;
  lookup: HostLookup;
  port: number;
  /** the request target as sent: origin form */
  path: string;
  /** the Host header as sent: the host and port the client asked the proxy for, never its own Host header */
  authority: string;
  /** over TLS through this agent (a tunnel the proxy terminated); absent: plain http */
  agent?: HttpsAgent;
  /** the end-to-end headers as they go out (a masked value written into them) */
  rewrite?: (headers: OutgoingHttpHeaders) => OutgoingHttpHeaders;
}

/**
 * .what = forwards one request to its host: the end-to-end headers and Host set from the target, the body streamed up
 *         and the answer streamed back (both with backpressure), a failure answered with the refusal routing gives
 * .why = one way out for a plain http:// request and for a request read inside a terminated tunnel
 */
const forwardRequest = (routing: ProxyRouting, target: UpstreamTarget, request: IncomingMessage, response: ServerResponse): void => {
  const headers: OutgoingHttpHeaders = { ...endToEndHeaders(request.headers), host: target.authority };
  // a body whose framing was hop-by-hop (chunked) is framed again: a method that sends none by default would otherwise
  // write it raw after headers that announce nothing
  if ((request.headers['transfer-encoding'] || request.headers['content-length']) && headers['content-length'] === undefined)
    headers['transfer-encoding'] = 'chunked';
  const options = {
    host: target.host,
    port: target.port,
    method: request.method,
    path: target.path,
    headers: target.rewrite ? target.rewrite(headers) : headers,
    lookup: target.lookup,
  };
  let upstream: ReturnType<typeof httpRequest>;
  try {
    upstream = target.agent ? httpsRequest({ ...options, agent: target.agent }) : httpRequest({ ...options, agent: false });
  } catch (error) {
    // node refuses a request target or header it cannot send (a control character): the client's mistake
    return answerRequest(response, { status: 400, reason: `bhrain: the proxy cannot send this request: ${(error as Error).message}` });
  }
  // reached: counted once connected (or on a kept connection), so a host that failed to resolve or answer is not in the
  // audit's hosts
  upstream.on('socket', (socket) =>
    socket.connecting ? socket.once('connect', () => routing.reached(target.host)) : routing.reached(target.host),
  );
  upstream.on('response', (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.headers));
    answer.pipe(response);
  });
  upstream.on('error', (error) => answerRequest(response, routing.upstreamFailure(target.host, error)));
  response.on('close', () => upstream.destroy());
  request.pipe(upstream);
};

/** .what = serves a proxy request: an absolute http:// URL, forwarded with its end-to-end headers and Host set from the URL */
const genOnRequest =
  (routing: ProxyRouting) =>
  (request: IncomingMessage, response: ServerResponse): void => {
    let url: URL | null = null;
    try {
      url = new URL(request.url ?? '');
    } catch {
      // not an absolute URL: a client that took this for a web server
    }
    if (!url || url.protocol !== 'http:')
      return answerRequest(response, {
        status: 400,
        reason: `bhrain: this is the sandbox's proxy: it takes requests for absolute http:// URLs (HTTP_PROXY) and CONNECT host:port (HTTPS_PROXY), not ${JSON.stringify(String(request.url).slice(0, 100))}`,
      });
    const decided = routing.decide(url.hostname);
    if ('status' in decided) return answerRequest(response, decided);
    // a masked host's placeholder is sent as it is: its value would cross the wire in clear
    forwardRequest(
      routing,
      { ...decided, port: Number(url.port || 80), path: `${url.pathname}${url.search}`, authority: url.host },
      request,
      response,
    );
  };

/** .what = answers a CONNECT with a refusal, its reason phrase naming the host too (curl -v and git's verbose output show it) */
const answerConnect = (client: Socket, refusal: Refusal): void => {
  const body = `${refusal.reason}\n`;
  const phrase = refusal.reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  client.end(
    `HTTP/1.1 ${refusal.status} ${phrase}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Bhrain-Proxy: ${refusal.status === 403 ? 'denied' : 'error'}\r\nConnection: close\r\n\r\n${body}`,
  );
};

/**
 * .what = serves a tunnel: CONNECT host:port, answered 200 once the host is connected, then bytes both ways; to a host a
 *         credential is masked for, the proxy's own TLS instead (startProxyMasking), whose requests it forwards
 */
const genOnConnect =
  (routing: ProxyRouting, sockets: Set<Socket>, masking: ProxyMasking | null) =>
  (request: IncomingMessage, client: Socket, head: Buffer): void => {
    client.on('error', () => client.destroy());
    const target = parseAuthority(request.url ?? '');
    if (!target)
      return answerConnect(client, {
        status: 400,
        reason: `bhrain: CONNECT takes host:port, not ${JSON.stringify(String(request.url).slice(0, 100))}`,
      });
    const decided = routing.decide(target.host);
    if ('status' in decided) return answerConnect(client, decided);
    if (masking?.masks(decided.host)) return masking.terminate(client, head, { ...decided, port: target.port });
    const upstream = connect({ host: decided.host, port: target.port, lookup: decided.lookup });
    sockets.add(upstream);
    let established = false;
    upstream.once('connect', () => {
      established = true;
      routing.reached(decided.host);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (error) => (established ? client.destroy() : answerConnect(client, routing.upstreamFailure(decided.host, error))));
    // a tunnel ends with either side; one refused before it opened ends once its answer is written
    upstream.on('close', () => {
      sockets.delete(upstream);
      if (established) client.destroy();
    });
    client.on('close', () => upstream.destroy());
  };

/**
 * .what = starts the domain proxy: an HTTP proxy, serving the listening sockets it is given (serve), which forwards
 *         requests for absolute http:// URLs and opens CONNECT tunnels (https, git over https) to the allowed hosts, and
 *         refuses every other host with a 403 whose reason and body name it. With masked credentials, their hosts are
 *         allowed too, and a tunnel to one is terminated here (startProxyMasking): its requests get the values in their headers
 * .why = the network of sandboxed bash opens by name, not all or nothing. node's own http and net: the job is narrow
 *        (decide by name, pass bytes on, count), and a kept proxy library (proxy-chain) would bring socks support, an
 *        upstream-proxy chain and its own refusal texts we do not use, three more packages, and a Node 20.11 floor
 * .note = a name is looked up here, never in the sandbox, and the connection goes to the address this lookup gave: a
 *         name allowed only by a wildcard may not lead to a loopback, link-local or unspecified address
 */
export const startDomainProxy = async (
  input: { allowedDomains: readonly string[]; masked?: readonly MaskedCredential[] },
  context: {
    lookup?: HostLookup;
    /** the CAs a masked host's certificate is verified with; default node's own, with NODE_EXTRA_CA_CERTS */
    upstreamCa?: string | readonly string[];
  } = {},
): Promise<DomainProxy> => {
  const masked = input.masked ?? [];
  for (const pattern of [...input.allowedDomains, ...masked.flatMap((credential) => credential.hosts)]) {
    const wrong = checkDomainPattern(pattern);
    if (wrong) throw new BadRequestError(`allowedDomains: ${wrong}`);
  }
  // a masked credential's hosts are allowed domains: the network reaches them, and only over TLS do they get its value
  const allowedDomains = [
    ...new Set([...input.allowedDomains, ...masked.flatMap((credential) => credential.hosts)].map(normalizeDomainPattern)),
  ];
  if (!allowedDomains.length)
    throw new BadRequestError('allowedDomains is empty: give at least one domain pattern, or leave the network off');
  const audit = genProxyAudit(allowedDomains);
  const routing = genProxyRouting(allowedDomains, context.lookup ?? dnsLookup, audit);
  const sockets = new Set<Socket>();
  // loaded only here: a proxy without masked credentials never loads the X.509 library
  const masking = masked.length
    ? await (
        await import('./startProxyMasking.js')
      ).startProxyMasking(
        { credentials: masked },
        { forward: (target, request, response) => forwardRequest(routing, target, request, response), upstreamCa: context.upstreamCa },
      )
    : null;

  // listens nowhere itself: each listener served hands it its connections
  const server = createServer({ requestTimeout: 0 }, genOnRequest(routing));
  server.on('connect', genOnConnect(routing, sockets, masking));
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket: Socket) => socket.destroy());
  const listeners = new Set<NetServer>();
  let clients = 0;
  let closed: Promise<void> | null = null;

  const serve = (listener: NetServer): void => {
    if (closed) return void listener.close();
    listeners.add(listener);
    listener.on('close', () => listeners.delete(listener));
    listener.on('connection', (socket: Socket) => {
      // each connection holds two of bhrain's fds (and a tunnel's memory): a command cannot open enough to starve the run
      if (clients >= MAX_CONNECTIONS) return void socket.destroy();
      clients++;
      socket.once('close', () => clients--);
      server.emit('connection', socket);
    });
    // it serves the sandbox's calls, each of which holds the process while it runs; idle, it holds nothing
    listener.unref();
  };

  return {
    allowedDomains,
    serve,
    masking,
    audit: audit.audit,
    mark: audit.mark,
    deniedSince: audit.deniedSince,
    close: () =>
      (closed ??= (async () => {
        for (const listener of listeners) listener.close();
        for (const socket of sockets) socket.destroy();
        masking?.close();
      })()),
  };
};

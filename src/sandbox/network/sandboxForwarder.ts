import { realpathSync } from 'node:fs';

import { isUnder } from '../../core/paths/isUnder.js';

/** the port of the sandbox's own 127.0.0.1 its listener takes: where HTTP_PROXY and HTTPS_PROXY point */
export const FORWARDER_PORT = 3128;

/** the message the forwarder sends with its listener, and bhrain's answer once it serves it */
export const FORWARDER_LISTENER_MESSAGE = 'listener';
export const FORWARDER_SERVED_MESSAGE = 'served';

/**
 * .what = the forwarder, run by node with -e on the channel to bhrain (NODE_CHANNEL_FD): it listens on
 *         127.0.0.1:<port> in the sandbox's network namespace, sends that listening socket to bhrain, waits for bhrain
 *         to say it serves it, and exits; any failure says why on stderr and exits 1
 * .why = a command reaches the network through HTTP_PROXY, an address on the sandbox's loopback, and the proxy is
 *        outside. The socket is made inside (its namespace is the sandbox's) and held outside, by bhrain's proxy, which
 *        accepts each connection on it: no process of the sandbox stands between a command and the proxy, so no unix
 *        socket is needed (the seccomp filter forbids them) and nothing a command kills or replaces carries its traffic
 */
const FORWARDER_SCRIPT = `const net = require('net');
const port = Number(process.argv[1]);
const fail = (what) => { process.stderr.write('bhrain-sandbox: the network forwarder ' + what + '\\n'); process.exit(1); };
if (!process.send) fail('has no channel to bhrain');
setTimeout(() => fail('got no answer from bhrain in 10 s'), 10000);
process.on('message', (message) => { if (message === '${FORWARDER_SERVED_MESSAGE}') process.exit(0); });
process.on('disconnect', () => fail('lost its channel to bhrain before bhrain took its listener'));
const server = net.createServer();
server.on('error', (error) => fail('cannot listen on 127.0.0.1:' + port + ': ' + error.message));
server.listen({ host: '127.0.0.1', port }, () =>
  process.send('${FORWARDER_LISTENER_MESSAGE}', server, (error) => error && fail('could not hand its listener to bhrain: ' + error.message)));`;

/** .what = how the supervisor starts the forwarder: node's path and arguments, the script's included */
export interface SandboxForwarder {
  /** node's real path on the host, visible at the same path through the read-only root */
  nodePath: string;
  nodeArgs: string[];
}

// node's own path does not change while this process runs
let nodeFound: string | null = null;

/**
 * .what = how a sandbox's supervisor starts the forwarder, or why it cannot: node may be neither where the sandbox
 *         hides it (/tmp) nor where a command can change it (a writable working directory)
 * .why = fail closed: the forwarder holds the channel to bhrain, and runs before the call of a later sandbox; a node a
 *        command could rewrite would run what that command planted
 */
export const planSandboxForwarder = (input: {
  /** the workspace's roots, real paths (genWorkspaceRoots) */
  roots: readonly string[];
  writable: boolean;
}): { ok: true; forwarder: SandboxForwarder } | { ok: false; reason: string } => {
  nodeFound ??= realpathSync(process.execPath);
  const nodePath = nodeFound;
  if (isUnder('/tmp', nodePath))
    return {
      ok: false,
      reason: `the network forwarder needs ${nodePath}, which is under /tmp, which the sandbox replaces with a private empty /tmp: use a node installed outside /tmp`,
    };
  const holder = input.writable ? input.roots.find((root) => isUnder(root, nodePath)) : undefined;
  if (holder)
    return {
      ok: false,
      reason: `the network forwarder needs ${nodePath}, which is inside the writable ${holder === input.roots[0] ? 'working directory' : 'directory added by --add-dir'} ${holder}, where a command could change it: run from a directory that does not hold node (nor add one), or use --sandbox read-only`,
    };
  return { ok: true, forwarder: { nodePath, nodeArgs: ['-e', FORWARDER_SCRIPT, String(FORWARDER_PORT)] } };
};

/** the variables that point a command's HTTP clients at the forwarder: curl, git, npm, pip and most others read them */
const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'];

/**
 * .what = a command's environment with every proxy variable pointing at the forwarder, and NO_PROXY naming only the
 *         sandbox's own loopback
 * .why = the forwarder is the only way out, so the user's own proxy settings (a corporate proxy, its NO_PROXY list)
 *        would only lead nowhere; a server a command starts on localhost is still reached directly
 */
export const withForwarderEnv = (env: Record<string, string | undefined>): Record<string, string | undefined> => {
  const url = `http://127.0.0.1:${FORWARDER_PORT}`;
  const proxied: Record<string, string | undefined> = { ...env };
  for (const name of PROXY_VARIABLES) proxied[name] = url;
  proxied.NO_PROXY = 'localhost,127.0.0.1,::1';
  proxied.no_proxy = proxied.NO_PROXY;
  return proxied;
};

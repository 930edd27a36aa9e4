import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute } from 'node:path';

import { isUnder } from '../resolveHiddenPaths.js';

/** the name of the proxy's socket in its private directory, which each sandbox gets bound read-only */
export const PROXY_SOCKET_NAME = 'proxy.sock';

/** the port the forwarder listens on, on the sandbox's own 127.0.0.1: where HTTP_PROXY and HTTPS_PROXY point */
export const FORWARDER_PORT = 3128;

/** where, inside the sandbox, the proxy's directory is bound (read-only): its socket is the sandbox's only way out */
export const SANDBOX_PROXY_DIR = '/dev/.bhrain-net';

/** where, inside the sandbox, bwrap puts the copy of the dynamic loader the forwarder runs from: mode 0111 */
export const FORWARDER_PATH = '/dev/.bhrain-forwarder';

/**
 * .what = the forwarder, run by node with -e: it proves it can reach the proxy's socket, listens on 127.0.0.1:<port>,
 *         says `ready` on stdout, and passes each connection's bytes to a connection of its own to the proxy's socket
 * .why = a command reaches the network through HTTP_PROXY, an address on the sandbox's loopback; the proxy is a unix
 *        socket outside it. It judges nothing: a command that kills it or takes its port still reaches only the proxy
 * .note = it ignores the signals a call's end or timeout sends every process (SIGTERM) and those a command could send
 *         it to stop it without killing it; SIGUSR1 would start node's inspector, which would let a command run code in
 *         it: a listener of its own keeps node's from ever running
 */
const FORWARDER_SCRIPT = `for (const signal of ['SIGUSR1', 'SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => {});
const net = require('net');
const [path, port] = process.argv.slice(1);
const fail = (what, error) => { process.stderr.write('bhrain-sandbox: the network forwarder ' + what + ': ' + error.message + '\\n'); process.exit(1); };
const probe = net.connect(path);
probe.on('error', (error) => fail('cannot reach the proxy at ' + path, error));
probe.on('connect', () => {
  probe.destroy();
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ path, allowHalfOpen: true });
    const cut = () => { client.destroy(); upstream.destroy(); };
    for (const socket of [client, upstream]) socket.on('error', cut).on('close', cut);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.on('error', (error) => fail('cannot listen on 127.0.0.1:' + port, error));
  server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\\n'));
});`;

/** .what = how the supervisor starts the forwarder: the command line, and what bwrap binds for it */
export interface SandboxForwarder {
  /** the proxy's private directory on the host, bound read-only at SANDBOX_PROXY_DIR */
  proxyDir: string;
  /** the host's dynamic loader (node's ELF interpreter), copied into the sandbox at FORWARDER_PATH with mode 0111 */
  interpreterPath: string;
  /** node's real path on the host, visible at the same path through the read-only root */
  nodePath: string;
  /** node's arguments, the script's included: what the loader runs */
  nodeArgs: string[];
}

/**
 * .what = the path of an ELF executable's program interpreter (its PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2), or
 *         null when it has none or is not ELF
 * .why = the forwarder is node run by that loader, from a copy of it no command can read: a process that runs a file it
 *        cannot read is made non-dumpable by the kernel, so no command may trace it or open its /proc files
 */
export const readElfInterpreter = (path: string): string | null => {
  const fd = openSync(path, 'r');
  try {
    const read = (offset: number, length: number): Buffer => {
      const bytes = Buffer.alloc(length);
      return bytes.subarray(0, readSync(fd, bytes, 0, length, offset));
    };
    const header = read(0, 64);
    if (header.length < 52 || header.readUInt32BE(0) !== 0x7f454c46) return null;
    const wide = header[4] === 2;
    const little = header[5] === 1;
    const u16 = (bytes: Buffer, at: number) => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
    const u32 = (bytes: Buffer, at: number) => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
    const word = (bytes: Buffer, at: number) =>
      wide ? Number(little ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at)) : u32(bytes, at);
    const tableAt = word(header, wide ? 0x20 : 0x1c);
    const entryBytes = u16(header, wide ? 0x36 : 0x2a);
    const entries = u16(header, wide ? 0x38 : 0x2c);
    for (let index = 0; index < entries; index++) {
      const entry = read(tableAt + index * entryBytes, entryBytes);
      // PT_INTERP
      if (entry.length < entryBytes || u32(entry, 0) !== 3) continue;
      const text = read(word(entry, wide ? 0x08 : 0x04), word(entry, wide ? 0x20 : 0x10)).toString('latin1');
      return text.replace(/\0.*$/s, '') || null;
    }
    return null;
  } finally {
    closeSync(fd);
  }
};

// node's own path and loader do not change while this process runs
let found: { nodePath: string; interpreterPath: string | null } | null = null;

/**
 * .what = how a sandbox's supervisor starts the forwarder, or why it cannot: node must be dynamically linked, and
 *         neither node nor its loader may be where the sandbox hides them (/tmp) or where a command can change them
 *         (a writable working directory)
 * .why = fail closed: the forwarder lives on between calls, so a node a command could rewrite would let it plant code
 *        that outlives its call
 */
export const planSandboxForwarder = (input: {
  proxyDir: string;
  cwdReal: string;
  writable: boolean;
}): { ok: true; forwarder: SandboxForwarder } | { ok: false; reason: string } => {
  if (!found) {
    const nodePath = realpathSync(process.execPath);
    const interpreter = readElfInterpreter(nodePath);
    found = { nodePath, interpreterPath: interpreter && isAbsolute(interpreter) ? realpathSync(interpreter) : null };
  }
  const { nodePath, interpreterPath } = found;
  if (!interpreterPath)
    return {
      ok: false,
      reason: `the network forwarder runs node through its dynamic loader, and ${nodePath} names none (a statically linked node): use a dynamically linked node, or --allow-network`,
    };
  for (const path of [nodePath, interpreterPath]) {
    if (isUnder('/tmp', path))
      return {
        ok: false,
        reason: `the network forwarder needs ${path}, which is under /tmp, which the sandbox replaces with a private empty /tmp: use a node installed outside /tmp`,
      };
    if (input.writable && isUnder(input.cwdReal, path))
      return {
        ok: false,
        reason: `the network forwarder needs ${path}, which is inside the writable working directory ${input.cwdReal}, where a command could change it: run from a directory that does not hold node, or use --sandbox read-only`,
      };
  }
  // node 22.14 and later can turn SIGUSR1 off outright; the script's listener does it on older ones
  const quiet = process.allowedNodeEnvironmentFlags.has('--disable-sigusr1') ? ['--disable-sigusr1'] : [];
  return {
    ok: true,
    forwarder: {
      proxyDir: input.proxyDir,
      interpreterPath,
      nodePath,
      nodeArgs: [...quiet, '-e', FORWARDER_SCRIPT, `${SANDBOX_PROXY_DIR}/${PROXY_SOCKET_NAME}`, String(FORWARDER_PORT)],
    },
  };
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

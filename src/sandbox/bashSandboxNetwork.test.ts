import { createServer, type Server } from 'node:http';
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../core/contract/BrainContext.js';
import { BadRequestError } from '../core/contract/errors.js';
import type { BhrainToolBox } from '../agent/tool/BhrainToolBox.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';
import { genBwrapArgs } from './genBwrapArgs.js';
import { startDomainProxy, type DomainProxy, type HostLookup } from './network/startDomainProxy.js';
import { tempDir } from '#test-helpers/fs.js';

// with allowed domains, bash in the sandbox reaches those hosts through the proxy outside it, which
// accepts the connections to the sandbox's 127.0.0.1:3128 itself (its forwarder handed it that listening socket before
// any command ran); nothing else. Names resolve through the proxy's lookup: *.test
// to 127.0.0.1, where the server listens (the sandbox's own 127.0.0.1 is another machine)

const testLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (!hostname.endsWith('.test')) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
}) as unknown as HostLookup;

let workspace: string;
let server: Server;
let port: number;
let proxy: DomainProxy;
beforeAll(async () => {
  workspace = tempDir('bhrain-net-ws-');
  server = createServer((request, response) => response.end(`hello ${request.headers.host}${request.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  proxy = await startDomainProxy({ allowedDomains: ['allowed.test'] }, { lookup: testLookup });
});
afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(workspace, { recursive: true, force: true });
});

const runBash = async (box: BhrainToolBox, command: string, timeoutMs?: number) =>
  box.execute(
    { call: { id: 'call-1', name: 'bash', input: { command, ...(timeoutMs ? { timeout_ms: timeoutMs } : {}) } } },
    { cwd: workspace, log: silentLog, env: { ...process.env } },
  );

describe('network by domain: bash in the sandbox, with allowed.test allowed', () => {
  // made once the proxy is (the file's beforeAll)
  let network: BhrainToolBox;
  beforeAll(() => {
    network = genBashToolBox({ sandbox: { allowedDomains: ['allowed.test'], domainProxy: proxy }, killGraceMs: 500 });
  });

  it('then an http request to the allowed host is answered, through HTTP_PROXY', async () => {
    const result = await runBash(network, `curl -sS http://allowed.test:${port}/hello; echo; echo "$HTTP_PROXY $https_proxy $NO_PROXY"`);
    expect(result.output).toBe(
      `exit code: 0\n--- stdout ---\nhello allowed.test:${port}/hello\nhttp://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1`,
    );
  });

  it('then a host not allowed gets the 403 that names it, and the result ends with a note that names it', async () => {
    const result = await runBash(network, `curl -sS http://denied.test:${port}/secret; curl -sS https://denied.test:${port}/`);
    expect(result.output).toMatch(
      /^exit code: 56\nnote: bhrain's proxy refused denied\.test while this command ran: the sandbox's network reaches only allowed\.test\. If the task needs another host, tell the user, who can allow it \(--allow-domain\); retrying will not help\.\n/,
    );
    expect(result.output).toContain('--- stdout ---\nbhrain: denied.test is not an allowed domain');
    expect(result.output).toContain('curl: (56) CONNECT tunnel failed, response 403');
  });

  it('then the model is told which hosts it reaches, and how others are refused', () => {
    const { description } = network.definitions[0];
    expect(description).toContain("The network reaches only these hosts, through bhrain's proxy: allowed.test.");
    expect(description).toContain('HTTP_PROXY and HTTPS_PROXY are set for it');
    expect(description).not.toContain('The network is off');
  });

  it('then a command that ignores the proxy and dials the host, by address or through bash, gets nowhere', async () => {
    const result = await runBash(
      network,
      `curl -sS --noproxy '*' http://127.0.0.1:${port}/; (exec 3<>/dev/tcp/127.0.0.1/${port}) && echo reached; true`,
    );
    expect(result.output).not.toContain('reached');
    expect(result.output).not.toContain('hello');
    expect(result.output).toMatch(/Couldn't connect to server/);
  });

  it("then no process stands between a command and the proxy: the sandbox's 3128 listens, and only the command's own processes run", async () => {
    // 0100007F:0C38 is 127.0.0.1:3128, state 0A is LISTEN; the processes are the supervisor, the command's bash, and ps
    const result = await runBash(network, `grep -c ' 0100007F:0C38 00000000:0000 0A ' /proc/net/tcp; ps -e -o comm= | sort | tr '\\n' ' '`);
    expect(result.output).toMatch(/^exit code: 0\n--- stdout ---\n1\n(bash |\.bhrain-supervi |ps |sort |tr ){5}$/);
    expect(result.output).not.toContain('node');
  });

  it('then a command that kills every process it can see keeps the network, in its call and the next', async () => {
    // only where pid 1 is the sandbox's supervisor: anywhere else, as root, kill -1 would reach every process of the machine
    const killed = await runBash(
      network,
      `test "$(cat /proc/1/comm)" = .bhrain-supervi && kill -9 -1 2>/dev/null; curl -sS http://allowed.test:${port}/after-kill`,
    );
    expect(killed.output).toBe(`exit code: 0\n--- stdout ---\nhello allowed.test:${port}/after-kill`);
    const next = await runBash(network, `curl -sS http://allowed.test:${port}/next`);
    expect(next.output).toBe(`exit code: 0\n--- stdout ---\nhello allowed.test:${port}/next`);
  });

  it("then a command cannot take 127.0.0.1:3128 (node, python with SO_REUSEADDR and SO_REUSEPORT, any address's 3128): the proxy keeps it", async () => {
    const result = await runBash(
      network,
      [
        `node -e "require('net').createServer().listen(3128, '127.0.0.1').on('error', (e) => console.log('node', e.code))"`,
        `python3 -c "
import socket
for host in ('127.0.0.1', '0.0.0.0'):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try: s.bind((host, 3128)); s.listen(); print('bound', host)
    except OSError as e: print('python', host, e.errno)"`,
        `curl -sS http://allowed.test:${port}/still`,
      ].join('; '),
    );
    expect(result.output).toBe(
      `exit code: 0\n--- stdout ---\nnode EADDRINUSE\npython 127.0.0.1 98\npython 0.0.0.0 98\nhello allowed.test:${port}/still`,
    );
  });

  it("then a command finds neither the forwarder's channel to bhrain nor its variables: the supervisor closed it first", async () => {
    const result = await runBash(network, 'ls /proc/self/fd | tr "\\n" " "; env | grep -c "^NODE_CHANNEL" || true');
    // 0, 1, 2, and the fd ls reads /proc/self/fd through
    expect(result.output).toBe('exit code: 0\n--- stdout ---\n0 1 2 3 0');
  });

  it('then a call that times out ends as one, and the next call reaches the host', async () => {
    const timedOut = await runBash(network, 'trap "" TERM; sleep 30', 300);
    expect(timedOut.output).toMatch(/^timed out after 300 ms/);
    const after = await runBash(network, `curl -sS http://allowed.test:${port}/after`);
    expect(after.output).toMatch(/hello allowed\.test:\d+\/after$/);
  });
});

describe('network by domain: fail closed', () => {
  it('given a proxy that cannot serve the listener the forwarder hands it, then the call fails saying so, never with the network silently off', async () => {
    const broken: DomainProxy = {
      ...proxy,
      serve: () => {
        throw new Error('no room for another listener');
      },
    };
    const result = await runBash(genBashToolBox({ sandbox: { domainProxy: broken } }), 'echo ran');
    expect(result.success).toBe(false);
    expect(result.output).toMatch(
      /^the sandbox ended while the command ran \(bwrap killed by SIGKILL\): the proxy could not serve the network forwarder's listener: no room for another listener/,
    );
    expect(result.output).not.toContain('ran\n');
  });

  it('given node inside the writable working directory, then the call is refused before any sandbox starts, saying why', async () => {
    const nodeDir = dirname(realpathSync(process.execPath));
    const result = await genBashToolBox({ sandbox: { domainProxy: proxy } }).execute(
      { call: { id: 'call-1', name: 'bash', input: { command: 'echo ran' } } },
      { cwd: nodeDir, log: silentLog, env: { ...process.env } },
    );
    expect(result.output).toMatch(
      /^bash is refused: the network forwarder needs .*node, which is inside the writable working directory .*, where a command could change it/,
    );
  });

  it("given a bad pattern, or a list that is not the proxy's, then the toolbox is not made, naming it", () => {
    expect(() => genBashToolBox({ sandbox: { allowedDomains: ['https://x.com'] } })).toThrow(BadRequestError);
    expect(() => genBashToolBox({ sandbox: { allowedDomains: ['https://x.com'] } })).toThrow(
      /^sandbox\.allowedDomains: "https:\/\/x\.com" is not a domain pattern/,
    );
    expect(() => genBashToolBox({ sandbox: { allowedDomains: ['other.test'], domainProxy: proxy } })).toThrow(
      /sandbox\.allowedDomains \(other\.test\) and sandbox\.domainProxy's \(allowed\.test\) differ/,
    );
  });
});

describe('network by domain: the toolbox starts its own proxy when none is given', () => {
  it('given allowedDomains alone, then the first call starts the proxy (real DNS: localhost) and the host is reached', async () => {
    const box = genBashToolBox({ sandbox: { allowedDomains: ['localhost'] } });
    // NO_PROXY sends localhost straight to the sandbox's own loopback: the proxy is named outright
    const result = await runBash(
      box,
      `curl -sS --proxy "$HTTP_PROXY" --noproxy '' http://localhost:${port}/own; echo; curl -sS --proxy "$HTTP_PROXY" --noproxy '' http://127.0.0.1:${port}/`,
    );
    expect(result.output).toMatch(
      new RegExp(`--- stdout ---\\nhello localhost:${port}/own\\nbhrain: 127\\.0\\.0\\.1 is not an allowed domain`),
    );
  });
});

describe('network by domain: where it does not apply, nothing changes', () => {
  it('given no allowed domains, then no forwarder runs, no proxy variable is set, and bwrap gets the arguments it always got', async () => {
    const result = await runBash(genBashToolBox(), `pgrep -c -f bhrain-forwarder; echo "[$HTTP_PROXY]"`);
    expect(result.output).toBe(`exit code: 0\n--- stdout ---\n0\n[${process.env.HTTP_PROXY ?? ''}]`);
    const args = genBwrapArgs({
      bashPath: '/bin/bash',
      mode: 'workspace-write',
      allowNetwork: false,
      cwd: '/w',
      roots: ['/w'],
      protectedPaths: [],
      shellVariables: [],
    });
    expect(args.join(' ')).not.toMatch(/bhrain-net|bhrain-forwarder|forwarder/);
    expect(args).toContain('--unshare-net');
  });

  it('given allowed domains with allowNetwork, then the whole network, no proxy', async () => {
    const box = genBashToolBox({ sandbox: { allowNetwork: true, allowedDomains: ['allowed.test'] } });
    expect(box.definitions[0].description).toContain('The network is on.');
    const result = await runBash(box, `curl -sS --noproxy '*' http://127.0.0.1:${port}/direct; echo; pgrep -c -f bhrain-forwarder`);
    expect(result.output).toBe(`exit code: 1\n--- stdout ---\nhello 127.0.0.1:${port}/direct\n0`);
  });

  it('given allowed domains with the sandbox off, then bash runs unconfined, without a proxy', async () => {
    const box = genBashToolBox({ sandbox: { mode: 'off', allowedDomains: ['allowed.test'] } });
    const result = await runBash(box, `curl -sS --noproxy '*' http://127.0.0.1:${port}/off`);
    expect(result.output).toBe(`exit code: 0\n--- stdout ---\nhello 127.0.0.1:${port}/off`);
  });
});

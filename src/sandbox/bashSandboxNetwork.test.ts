import { createServer, type Server } from 'node:http';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../core/contract/BrainContext.js';
import { BadRequestError } from '../core/contract/errors.js';
import type { BhrainToolBox } from '../agent/tool/BhrainToolBox.js';
import { genBashToolBox } from '../agent/tools/bash/genBashToolBox.js';
import { genBwrapArgs } from './genBwrapArgs.js';
import { startDomainProxy, type DomainProxy, type HostLookup } from './network/startDomainProxy.js';

// issue 30 point 3: with allowed domains, bash in the sandbox reaches those hosts through the proxy outside it, by way of
// a forwarder the sandbox's supervisor keeps across calls; nothing else. Names resolve through the proxy's lookup: *.test
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
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'bhrain-net-ws-')));
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

// the forwarder as the sandbox sees it: its pid and its start time, which name one process
const FORWARDER_ID = `f=$(pgrep -s 0 -f '/dev/[.]bhrain-net/proxy[.]sock' | grep -vx 1 | head -n 1); echo "forwarder $f $(cut -d' ' -f22 /proc/$f/stat)"`;
const forwarderOf = (output: string): string => /forwarder (\d+ \d+)/.exec(output)?.[1] ?? 'none';

describe('issue 30 network by domain: bash in the sandbox, with allowed.test allowed', () => {
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

  it('then the forwarder is the same process from call to call, and nothing else a call started is left', async () => {
    const first = await runBash(network, `${FORWARDER_ID}; sleep 900123 & setsid sleep 900124 &`);
    const second = await runBash(network, `${FORWARDER_ID}; pgrep -c -f 'sleep 90012' || true`);
    expect(forwarderOf(first.output)).not.toBe('none');
    expect(forwarderOf(second.output)).toBe(forwarderOf(first.output));
    expect(second.output).toMatch(/\n0$/);
  });

  it('then a command that kills the forwarder loses the network for the rest of its call, and the next call has a new one', async () => {
    const killed = await runBash(network, `${FORWARDER_ID}; kill -9 "$f"; sleep 0.2; curl -sS http://allowed.test:${port}/ || echo lost`);
    expect(killed.output).toMatch(/\nlost\n--- stderr ---\ncurl: \(7\) Failed to connect to 127\.0\.0\.1 port 3128/);
    const next = await runBash(network, `${FORWARDER_ID}; curl -sS http://allowed.test:${port}/again`);
    expect(forwarderOf(next.output)).not.toBe(forwarderOf(killed.output));
    expect(next.output).toMatch(/hello allowed\.test:\d+\/again$/);
  });

  it('then a command that stops the forwarder (SIGSTOP) does not stop the next call', async () => {
    await runBash(network, `${FORWARDER_ID}; kill -STOP "$f"`);
    const next = await runBash(network, `curl -sS -m 5 http://allowed.test:${port}/resumed`);
    expect(next.output).toMatch(/hello allowed\.test:\d+\/resumed$/);
  });

  it('then a call that times out ends as one, and the forwarder outlives it (it ignores SIGTERM)', async () => {
    const before = await runBash(network, FORWARDER_ID);
    const timedOut = await runBash(network, 'trap "" TERM; sleep 30', 300);
    expect(timedOut.output).toMatch(/^timed out after 300 ms/);
    const after = await runBash(network, `${FORWARDER_ID}; curl -sS http://allowed.test:${port}/after`);
    expect(after.output).toMatch(/hello allowed\.test:\d+\/after$/);
    // the kill grace may have ended the sandbox instead: then a new one, with a new forwarder; either way the network is back
    expect(forwarderOf(after.output)).not.toBe('none');
    expect(forwarderOf(before.output)).not.toBe('none');
  });

  it('then no command can read the forwarder: it is non-dumpable, like the supervisor', async () => {
    const result = await runBash(
      network,
      `${FORWARDER_ID}; cat /proc/$f/environ /proc/$f/maps 2>&1 | head -c 300; if exec 3</proc/$f/mem; then echo mem-opened; fi 2>/dev/null; true`,
    );
    expect(result.output).toMatch(/cat: \/proc\/\d+\/environ: Permission denied/);
    expect(result.output).toMatch(/cat: \/proc\/\d+\/maps: Permission denied/);
    expect(result.output).not.toContain('mem-opened');
  });
});

describe('issue 30 network by domain: fail closed', () => {
  it('given a proxy whose socket is not there, then the call fails, saying the forwarder cannot reach it, never with the network silently off', async () => {
    const emptyDir = await mkdtemp(join(tmpdir(), 'bhrain-net-empty-'));
    const result = await runBash(genBashToolBox({ sandbox: { domainProxy: { ...proxy, socketDir: emptyDir } } }), 'echo ran');
    await rm(emptyDir, { recursive: true, force: true });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(
      /^the sandbox ended while the command ran \(bwrap (exit 70|killed by SIGKILL)\): bhrain-sandbox: the network forwarder cannot reach the proxy at \/dev\/\.bhrain-net\/proxy\.sock: connect ENOENT/,
    );
    expect(result.output).not.toContain('ran\n');
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

describe('issue 30 network by domain: the toolbox starts its own proxy when none is given', () => {
  it('given allowedDomains alone, then the first call starts the proxy (real DNS: localhost) and the host is reached', async () => {
    // its proxy is the toolbox's, closed with the process: its directory goes in a TMPDIR of the test's own
    const ownTmp = await mkdtemp(join(tmpdir(), 'bhrain-net-own-'));
    const tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = ownTmp;
    try {
      const box = genBashToolBox({ sandbox: { allowedDomains: ['localhost'] } });
      // NO_PROXY sends localhost straight to the sandbox's own loopback: the proxy is named outright
      const result = await runBash(
        box,
        `curl -sS --proxy "$HTTP_PROXY" --noproxy '' http://localhost:${port}/own; echo; curl -sS --proxy "$HTTP_PROXY" --noproxy '' http://127.0.0.1:${port}/`,
      );
      expect(result.output).toMatch(
        new RegExp(`--- stdout ---\\nhello localhost:${port}/own\\nbhrain: 127\\.0\\.0\\.1 is not an allowed domain`),
      );
    } finally {
      if (tmpBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpBefore;
      await rm(ownTmp, { recursive: true, force: true });
    }
  });
});

describe('issue 30 network by domain: where it does not apply, nothing changes', () => {
  it('given no allowed domains, then no forwarder runs, no proxy variable is set, and bwrap gets the arguments it always got', async () => {
    const result = await runBash(genBashToolBox(), `pgrep -c -f bhrain-forwarder; echo "[$HTTP_PROXY]"`);
    expect(result.output).toBe(`exit code: 0\n--- stdout ---\n0\n[${process.env.HTTP_PROXY ?? ''}]`);
    const args = genBwrapArgs({
      bashPath: '/bin/bash',
      mode: 'workspace-write',
      allowNetwork: false,
      cwd: '/w',
      cwdReal: '/w',
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

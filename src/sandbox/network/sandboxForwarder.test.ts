import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';

import { describe, expect, it } from 'vitest';

import { planSandboxForwarder, readElfInterpreter, withForwarderEnv } from './sandboxForwarder.js';

// issue 30 point 3: inside the sandbox, a forwarder (node, run through a copy of its loader no command can read)
// listens on 127.0.0.1:3128 and passes connections to the proxy's socket

describe('issue 30 network by domain: how the forwarder is run', () => {
  it("given node's binary, then its ELF interpreter is the loader ld.so names (the one `ldd` lists)", () => {
    const interpreter = readElfInterpreter(realpathSync(process.execPath));
    expect(interpreter).toMatch(/^\/.*ld-(linux|musl)[^/]*\.so/);
    const ldd = execFileSync('ldd', [process.execPath], { encoding: 'utf8' });
    expect(ldd).toContain(interpreter!);
  });

  it('given a file that is not ELF, or a script, then there is no interpreter', () => {
    expect(readElfInterpreter('/etc/hostname')).toBeNull();
    expect(readElfInterpreter(import.meta.filename)).toBeNull();
  });

  it('given a working directory that holds node, then the forwarder is refused where it is writable, and runs where it is not', () => {
    const nodeDir = dirname(realpathSync(process.execPath));
    const writable = planSandboxForwarder({ proxyDir: '/tmp/p', cwdReal: nodeDir, writable: true });
    expect(writable).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^the network forwarder needs .*node, which is inside the writable working directory .*, where a command could change it/,
      ),
    });
    const readOnly = planSandboxForwarder({ proxyDir: '/tmp/p', cwdReal: nodeDir, writable: false });
    expect(readOnly.ok).toBe(true);
  });

  it('given a plan, then node runs the script with the in-sandbox socket and port, after the loader copy', () => {
    const plan = planSandboxForwarder({ proxyDir: '/tmp/bhrain-net-x', cwdReal: '/work/repo', writable: true });
    if (!plan.ok) throw new Error(plan.reason);
    expect(plan.forwarder).toMatchObject({ proxyDir: '/tmp/bhrain-net-x', nodePath: realpathSync(process.execPath) });
    expect(plan.forwarder.nodeArgs.slice(-2)).toEqual(['/dev/.bhrain-net/proxy.sock', '3128']);
    expect(plan.forwarder.nodeArgs).toContain('-e');
  });

  it("given the user's own proxy settings, then a command's every proxy variable points at the forwarder and NO_PROXY names only the loopback", () => {
    const env = withForwarderEnv({ PATH: '/bin', HTTPS_PROXY: 'http://corp:8080', NO_PROXY: '.corp.example', no_proxy: '.corp.example' });
    expect(env).toEqual({
      PATH: '/bin',
      HTTP_PROXY: 'http://127.0.0.1:3128',
      HTTPS_PROXY: 'http://127.0.0.1:3128',
      ALL_PROXY: 'http://127.0.0.1:3128',
      http_proxy: 'http://127.0.0.1:3128',
      https_proxy: 'http://127.0.0.1:3128',
      all_proxy: 'http://127.0.0.1:3128',
      NO_PROXY: 'localhost,127.0.0.1,::1',
      no_proxy: 'localhost,127.0.0.1,::1',
    });
  });
});

import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';

import { describe, expect, it } from 'vitest';

import { planSandboxForwarder, withForwarderEnv } from './sandboxForwarder.js';

// inside the sandbox, a forwarder (node, run once before any command) listens on 127.0.0.1:3128 and
// hands that listening socket to bhrain's proxy

describe('network by domain: how the forwarder is run', () => {
  it('given a working directory that holds node, then the forwarder is refused where it is writable, and runs where it is not', () => {
    const nodeDir = dirname(realpathSync(process.execPath));
    const writable = planSandboxForwarder({ roots: [nodeDir], writable: true });
    expect(writable).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^the network forwarder needs .*node, which is inside the writable working directory .*, where a command could change it/,
      ),
    });
    const readOnly = planSandboxForwarder({ roots: [nodeDir], writable: false });
    expect(readOnly.ok).toBe(true);
  });

  it("given a plan, then node's real path runs the script, with the port as its argument", () => {
    const plan = planSandboxForwarder({ roots: ['/work/repo'], writable: true });
    if (!plan.ok) throw new Error(plan.reason);
    expect(plan.forwarder.nodePath).toBe(realpathSync(process.execPath));
    expect(plan.forwarder.nodeArgs[0]).toBe('-e');
    expect(plan.forwarder.nodeArgs.at(-1)).toBe('3128');
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

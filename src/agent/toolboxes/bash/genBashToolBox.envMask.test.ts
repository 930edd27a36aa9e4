import { X509Certificate } from 'node:crypto';
import { rm } from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLog } from '../../../core/contract/BrainContext.js';
import { BadRequestError } from '../../../core/contract/errors.js';
import type { BhrainToolContext } from '../../tool/BhrainToolBox.js';
import { genMaskedCredentials } from '../../../sandbox/network/genMaskedCredentials.js';
import { startDomainProxy } from '../../../sandbox/network/startDomainProxy.js';
import { genBashToolBox } from './genBashToolBox.js';
import { tempDir } from '#test-helpers/fs.js';

// masked variables in the bash toolbox: the commands see a placeholder, the CA files and the variables that point at
// them; the options that would leave the values without the proxy fail when the toolbox is made

const SECRET = 'ghs_theRealValueNeverShown0123';
let workspace: string;
beforeAll(async () => {
  workspace = tempDir('bhrain-bash-mask-');
});
afterAll(async () => rm(workspace, { recursive: true, force: true }));

const warnings: string[] = [];
const contextFor = (env: Record<string, string | undefined>): BhrainToolContext => ({
  cwd: workspace,
  log: { ...silentLog, warn: (message: string) => warnings.push(message) },
  env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
});

describe('genBashToolBox with sandbox.env.mask: the options', () => {
  it.each([
    [
      { mode: 'off' as const },
      "sandbox.env.mask needs bhrain's network proxy, which writes the values into requests: with mode 'off', bash runs unconfined",
    ],
    [
      { allowNetwork: true },
      'with allowNetwork, the sandbox reaches every host without it. Give the hosts bash needs in allowedDomains instead of allowNetwork',
    ],
  ])('given %j, then a bad request when the toolbox is made, saying why and what to do instead', (sandbox, message) => {
    const make = () => genBashToolBox({ sandbox: { ...sandbox, env: { mask: { GH_TOKEN: ['github.com'] } } } });
    expect(make).toThrow(BadRequestError);
    expect(make).toThrow(message);
  });

  it('given a bad name or host, then a bad request naming it', () => {
    expect(() => genBashToolBox({ sandbox: { env: { mask: { 'GH-TOKEN': ['github.com'] } } } })).toThrow(
      'sandbox.env.mask: "GH-TOKEN" is not a variable to mask',
    );
    expect(() => genBashToolBox({ sandbox: { env: { mask: { GH_TOKEN: ['github.com/x'] } } } })).toThrow(
      'sandbox.env.mask: GH_TOKEN: "github.com/x" is not a domain pattern: give the host alone, without a path',
    );
  });

  it('given a proxy of its own that masks, then the toolbox tells the model what the proxy masks; with sandbox.env.mask as well, a bad request', async () => {
    const { credentials } = genMaskedCredentials({ mask: { NPM_TOKEN: ['registry.npmjs.org'] } }, { env: { NPM_TOKEN: 'npm_x' } });
    const proxy = await startDomainProxy({ allowedDomains: ['example.com'], masked: credentials });
    try {
      const box = genBashToolBox({ sandbox: { domainProxy: proxy } });
      expect(box.definitions[0].description).toContain(
        'These variables hold placeholders, not their values: $NPM_TOKEN (registry.npmjs.org).',
      );
      expect(() => genBashToolBox({ sandbox: { domainProxy: proxy, env: { mask: { NPM_TOKEN: ['registry.npmjs.org'] } } } })).toThrow(
        'sandbox.env.mask and sandbox.domainProxy: give one of them',
      );
      expect(() => genBashToolBox({ sandbox: { domainProxy: proxy, allowNetwork: true } })).toThrow(
        "sandbox.env.mask needs bhrain's network proxy",
      );
    } finally {
      await proxy.close();
    }
  });

  it('given masked variables, then their hosts are allowed domains, and the model is told they hold placeholders and where the values go', () => {
    const box = genBashToolBox({
      sandbox: { allowedDomains: ['registry.npmjs.org'], env: { mask: { GH_TOKEN: ['api.github.com', 'github.com'] } } },
    });
    const description = box.definitions[0].description;
    expect(description).toContain(
      "The network reaches only these hosts, through bhrain's proxy: registry.npmjs.org, api.github.com, github.com.",
    );
    expect(description).toContain(
      'These variables hold placeholders, not their values: $GH_TOKEN (api.github.com, github.com). Use them as you would the values (curl -H "Authorization: Bearer $GH_TOKEN"',
    );
  });
});

describe('genBashToolBox with sandbox.env.mask: what a command sees', () => {
  const box = genBashToolBox({ sandbox: { env: { mask: { GH_TOKEN: ['github.test'], UNSET_TOKEN: ['github.test'] } } } });
  const run = async (command: string) =>
    (await box.execute({ call: { id: 'c', name: 'bash', input: { command } } }, contextFor({ GH_TOKEN: SECRET }))).output;

  it('given a masked variable, then the command sees its placeholder, never the value, in env and in its own /proc', async () => {
    const output = await run('env | grep -E "^(GH_TOKEN|UNSET_TOKEN)="; tr "\\0" "\\n" < /proc/self/environ | grep -c ghs_ || true');
    expect(output).toMatch(/--- stdout ---\nGH_TOKEN=bhrain-masked-GH_TOKEN-[0-9a-f]{24}\n0(\n|$)/);
    expect(output).not.toContain(SECRET);
    expect(warnings).toEqual(['sandbox.env.mask: UNSET_TOKEN is not set, so there is nothing to mask']);
  });

  it('given masking on, then the CA variables point at the sandbox’s read-only CA files: the run CA alone, and a bundle with the system’s', async () => {
    const output = await run(
      'for name in SSL_CERT_FILE CURL_CA_BUNDLE GIT_SSL_CAINFO REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS; do echo "$name=${!name}"; done; grep -c "BEGIN CERTIFICATE" /dev/.bhrain-ca.pem /dev/.bhrain-ca-bundle.pem; echo x > /dev/.bhrain-ca.pem || echo refused; grep -c "PRIVATE KEY" /dev/.bhrain-ca.pem /dev/.bhrain-ca-bundle.pem; cat /dev/.bhrain-ca.pem',
    );
    expect(output).toContain(
      'SSL_CERT_FILE=/dev/.bhrain-ca-bundle.pem\nCURL_CA_BUNDLE=/dev/.bhrain-ca-bundle.pem\nGIT_SSL_CAINFO=/dev/.bhrain-ca-bundle.pem\nREQUESTS_CA_BUNDLE=/dev/.bhrain-ca-bundle.pem\nNODE_EXTRA_CA_CERTS=/dev/.bhrain-ca.pem\n',
    );
    const [, inBundle] = /\/dev\/\.bhrain-ca-bundle\.pem:(\d+)/.exec(output)!;
    expect(output).toContain('/dev/.bhrain-ca.pem:1\n');
    expect(Number(inBundle)).toBeGreaterThan(50);
    expect(output).toContain('refused\n');
    expect(output).toMatch(/--- stderr ---\n.*\/dev\/\.bhrain-ca\.pem: Read-only file system/);
    expect(output).toContain('/dev/.bhrain-ca.pem:0\n/dev/.bhrain-ca-bundle.pem:0\n');
    const ca = new X509Certificate(output.slice(output.indexOf('-----BEGIN CERTIFICATE-----')));
    expect(ca.ca).toBe(true);
    expect(ca.subject).toMatch(/^CN=bhrain sandbox CA /);
  });
});

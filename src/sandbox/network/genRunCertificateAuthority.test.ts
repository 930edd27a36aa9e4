import { X509Certificate } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { connect, TLSSocket } from 'node:tls';

import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';

import { genRunCertificateAuthority, type RunCertificateAuthority } from './genRunCertificateAuthority.js';

// the CA a run makes to terminate TLS for its masked hosts, read back with node's own X.509 parser and a real handshake

/** .what = the key usage bits and basic constraints of a certificate, as @peculiar/x509 parses them (node shows neither) */
const constraintsOf = (pem: string) => {
  const parsed = new x509.X509Certificate(pem);
  const basic = parsed.getExtension(x509.BasicConstraintsExtension);
  const usage = parsed.getExtension(x509.KeyUsagesExtension);
  return {
    ca: basic?.ca,
    pathLength: basic?.pathLength,
    basicCritical: basic?.critical,
    usages: usage?.usages,
    usageCritical: usage?.critical,
  };
};

/** .what = the certificates of a PEM chain, leaf first */
const chainOf = (pem: string): X509Certificate[] =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((each) => new X509Certificate(each));

let ca: RunCertificateAuthority;
let caCert: X509Certificate;
beforeAll(async () => {
  ca = await genRunCertificateAuthority();
  caCert = new X509Certificate(ca.certPem);
});

describe('the run CA', () => {
  it('given a new run CA, then its certificate is a self-signed CA that may sign only leaves, valid now and for the run', () => {
    expect(caCert.ca).toBe(true);
    expect(caCert.checkIssued(caCert)).toBe(true);
    expect(caCert.verify(caCert.publicKey)).toBe(true);
    expect(caCert.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    expect(caCert.subject).toMatch(/^CN=bhrain sandbox CA [0-9a-f-]{36}\nO=bhrain$/);
    expect(constraintsOf(ca.certPem)).toEqual({
      ca: true,
      pathLength: 0,
      basicCritical: true,
      usages: x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
      usageCritical: true,
    });
    expect(new Date(caCert.validFrom).getTime()).toBeLessThan(Date.now());
    expect(new Date(caCert.validTo).getTime()).toBeGreaterThan(Date.now() + 30 * 24 * 3_600_000);
    // its PEM is the certificate alone: no key travels with what the sandbox is shown
    expect(ca.certPem).not.toMatch(/PRIVATE KEY/);
  });

  it('given two runs, then their CAs differ: a certificate of one is not trusted by the other', async () => {
    const other = await genRunCertificateAuthority();
    const leaf = chainOf((await other.leafFor('github.test')).certPem)[0];
    expect(leaf.checkIssued(caCert)).toBe(false);
    expect(leaf.verify(caCert.publicKey)).toBe(false);
  });

  it('given a host, then its leaf is signed by the CA, names the host alone, serves TLS servers only, and is not a CA', async () => {
    const { certPem } = await ca.leafFor('api.github.test');
    const [leaf, issuer] = chainOf(certPem);
    expect(issuer.fingerprint256).toBe(caCert.fingerprint256);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.subjectAltName).toBe('DNS:api.github.test');
    expect(leaf.checkHost('api.github.test')).toBe('api.github.test');
    expect(leaf.checkHost('github.test')).toBeUndefined();
    // extended key usage: serverAuth only
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(constraintsOf(leaf.toString())).toEqual({
      ca: false,
      pathLength: undefined,
      basicCritical: true,
      usages: x509.KeyUsageFlags.digitalSignature,
      usageCritical: true,
    });
    expect(leaf.validTo).toBe(caCert.validTo);
  });

  it('given an IP address, then its leaf names it as an IP address', async () => {
    const [leaf] = chainOf((await ca.leafFor('127.0.0.2')).certPem);
    expect(leaf.subjectAltName).toBe('IP Address:127.0.0.2');
    expect(leaf.checkIP('127.0.0.2')).toBe('127.0.0.2');
  });

  it('given the same host twice, then the leaf is issued once and kept; another host gets its own', async () => {
    const first = ca.leafFor('cached.test');
    expect(ca.leafFor('cached.test')).toBe(first);
    expect((await ca.leafFor('cached.test')).certPem).toBe((await first).certPem);
    expect((await ca.leafFor('other.test')).certPem).not.toBe((await first).certPem);
  });

  it('given a TLS server with the leaf, then a client that trusts only the CA completes the handshake for that name, and not for another', async () => {
    const { secureContext } = await ca.leafFor('github.test');
    const server = createServer((socket) => {
      const tls = new TLSSocket(socket, { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
      tls.on('error', () => socket.destroy());
      tls.on('secure', () => tls.end('hello'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const handshake = (servername: string) =>
      new Promise<string>((resolve) => {
        const client = connect({ host: '127.0.0.1', port, servername, ca: ca.certPem, ALPNProtocols: ['http/1.1'] });
        let got = '';
        client.on('data', (chunk) => (got += chunk));
        client.on('end', () => resolve(`${client.alpnProtocol}:${got}`));
        client.on('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? error.message));
      });
    try {
      expect(await handshake('github.test')).toBe('http/1.1:hello');
      expect(await handshake('evil.test')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    } finally {
      server.close();
    }
  });
});

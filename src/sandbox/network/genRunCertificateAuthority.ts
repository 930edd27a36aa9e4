// @peculiar/x509 resolves its ASN.1 schemas through tsyringe, which needs the Reflect metadata API: loaded first
import 'reflect-metadata';

import { webcrypto, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';

import * as x509 from '@peculiar/x509';

/** the key of the CA and of the leaves: EC P-256, signed with SHA-256 (fast to make, and every TLS client takes it) */
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** how long the CA and its leaves are valid from the run's start: longer than any run, shorter than clients' caps (398 days) */
const VALIDITY_MS = 90 * 24 * 3_600_000;

/** how far back validity starts: a sandbox's clock a little behind this one still takes the certificates */
const BACKDATE_MS = 3_600_000;

/** leaves kept, the least recently used going first: a wildcard's names come from the commands */
const MAX_CACHED_LEAVES = 256;

/** .what = a certificate the run's CA issued for one host: its PEM (the CA's after it), and the context a TLS server uses */
export interface RunLeafCertificate {
  certPem: string;
  secureContext: SecureContext;
}

/**
 * .what = the certificate authority of one run: its certificate (what the sandbox trusts), and a leaf for a host,
 *         issued on first use and kept
 * .why = the proxy terminates TLS for a masked host with a certificate the sandbox's clients accept, and no other
 *        machine or run does
 */
export interface RunCertificateAuthority {
  /** the CA's certificate, PEM: public, shown read-only in the sandbox */
  certPem: string;
  leafFor: (host: string) => Promise<RunLeafCertificate>;
}

/** .what = a certificate as PEM with a trailing newline */
const pemOf = (certificate: x509.X509Certificate): string => `${certificate.toString('pem').trim()}\n`;

/**
 * .what = makes a CA for this run: an EC P-256 key that cannot be exported (it never leaves this process's memory) and a
 *         self-signed certificate that may sign server certificates only (path length 0); leaves share one key of their own
 * .why = @peculiar/x509 builds the certificates over node's WebCrypto (the keys and signatures are node's own): ~15 ms for
 *        the CA, ~3 ms a leaf. node-forge builds only RSA certificates, signs in JavaScript (~25 ms a leaf here) and
 *        needs RSA keys (100 to 400 ms to make)
 */
export const genRunCertificateAuthority = async (): Promise<RunCertificateAuthority> => {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const subtle = webcrypto.subtle;
  const usages: webcrypto.KeyUsage[] = ['sign', 'verify'];
  const caKeys = (await subtle.generateKey(KEY_ALGORITHM, false, usages)) as webcrypto.CryptoKeyPair;
  const leafKeys = (await subtle.generateKey(KEY_ALGORITHM, true, usages)) as webcrypto.CryptoKeyPair;
  const leafKeyPem = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await subtle.exportKey('pkcs8', leafKeys.privateKey))
    .toString('base64')
    .replace(/.{64}/g, '$&\n')
    .trim()}\n-----END PRIVATE KEY-----\n`;
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const notAfter = new Date(notBefore.getTime() + VALIDITY_MS);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=bhrain sandbox CA ${randomUUID()}, O=bhrain`,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: KEY_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const certPem = pemOf(ca);
  const authorityKeyId = await x509.AuthorityKeyIdentifierExtension.create(ca);

  const issue = async (host: string): Promise<RunLeafCertificate> => {
    const leaf = await x509.X509CertificateGenerator.create({
      subject: `CN=${host}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: KEY_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: isIP(host) ? 'ip' : 'dns', value: host }]),
        await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
        // Python 3.13's strict verification wants it on every certificate a CA signed
        authorityKeyId,
      ],
    });
    const leafPem = `${pemOf(leaf)}${certPem}`;
    return { certPem: leafPem, secureContext: createSecureContext({ cert: leafPem, key: leafKeyPem }) };
  };

  const leaves = new Map<string, Promise<RunLeafCertificate>>();
  return {
    certPem,
    leafFor: (host) => {
      const kept = leaves.get(host);
      if (kept) {
        // used: the most recent again
        leaves.delete(host);
        leaves.set(host, kept);
        return kept;
      }
      const made = issue(host);
      leaves.set(host, made);
      made.catch(() => leaves.delete(host));
      if (leaves.size > MAX_CACHED_LEAVES) leaves.delete(leaves.keys().next().value!);
      return made;
    },
  };
};

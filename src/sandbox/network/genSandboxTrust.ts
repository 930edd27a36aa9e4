import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

/** where, inside the sandbox, the run CA's certificate is shown read-only (with the caller's NODE_EXTRA_CA_CERTS before it) */
export const SANDBOX_CA_PATH = '/dev/.bhrain-ca.pem';

/** where, inside the sandbox, the bundle of every CA it trusts is shown read-only: the system's, then the run CA */
export const SANDBOX_CA_BUNDLE_PATH = '/dev/.bhrain-ca-bundle.pem';

/** the system CA bundles, by distribution: the first that can be read is the bundle's base */
const SYSTEM_CA_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

/** .what = one PEM certificate block; a file's other blocks (a private key beside them) are never copied */
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** .what = the certificate blocks of a file, or none when it cannot be read */
const readCertificates = (path: string | undefined): string[] => {
  if (!path) return [];
  try {
    return readFileSync(path, 'utf8').match(PEM_CERTIFICATE) ?? [];
  } catch {
    return [];
  }
};

/**
 * .what = the files that make the sandbox trust the run's CA (shown read-only at SANDBOX_CA_PATH and
 *         SANDBOX_CA_BUNDLE_PATH): the CA alone, after the caller's NODE_EXTRA_CA_CERTS (what node adds to its own), and
 *         a whole bundle: the caller's SSL_CERT_FILE, else the system's, else node's, then NODE_EXTRA_CA_CERTS, then the CA
 * .why = a client in the sandbox must accept the proxy's leaf for a masked host, and still verify every other host's own
 *        certificate through a plain tunnel; only certificate blocks are copied, never a key that shares their file
 */
export const genSandboxTrust = (
  input: { caCertPem: string },
  context: { env: Record<string, string | undefined> },
): Array<{ path: string; text: string }> => {
  const base = [context.env.SSL_CERT_FILE, ...SYSTEM_CA_BUNDLES].map(readCertificates).find((certificates) => certificates.length) ?? [
    ...rootCertificates,
  ];
  const extra = readCertificates(context.env.NODE_EXTRA_CA_CERTS);
  const join = (certificates: string[]) => `${certificates.map((certificate) => certificate.trim()).join('\n')}\n`;
  return [
    { path: SANDBOX_CA_PATH, text: join([...extra, input.caCertPem]) },
    { path: SANDBOX_CA_BUNDLE_PATH, text: join([...base, ...extra, input.caCertPem]) },
  ];
};

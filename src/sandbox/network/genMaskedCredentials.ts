import { randomBytes } from 'node:crypto';

import { BadRequestError } from '../../core/contract/errors.js';
import { checkDomainPattern, normalizeDomainPattern } from './allowedDomains.js';

/**
 * .what = a credential the sandbox sees only as a placeholder: bhrain's proxy writes its value into the requests to its
 *         hosts, over TLS it terminates itself
 * .why = a command can use GH_TOKEN (gh, git over https, npm publish) while the value never reaches the model, a file
 *        in the workspace, or any other host
 */
export interface MaskedCredential {
  /** the environment variable, e.g. GH_TOKEN */
  name: string;
  /** what the sandbox's environment holds instead: `bhrain-masked-<name>-<random>`, new for each run */
  placeholder: string;
  /** the real value: only the proxy reads it, and writes it into requests to `hosts` */
  value: string;
  /** the domain patterns (allowedDomains' rules) whose requests get the value, normalized */
  hosts: readonly string[];
}

/** .what = the variables masked, each with the hosts its value may go to: `{ GH_TOKEN: ['api.github.com', 'github.com'] }` */
export type EnvMask = Readonly<Record<string, readonly string[]>>;

/** .what = what a masked variable's name must be, for the messages that reject one */
export const MASKED_NAME_EXPECTS = 'an environment variable name (letters, digits and _, not starting with a digit), e.g. GH_TOKEN';

/** the variables bhrain sets for the sandbox itself (the proxy, the run's CA): masking one would break what it points at */
export const SANDBOX_SET_VARIABLES = new Set([
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'REQUESTS_CA_BUNDLE',
  'NODE_EXTRA_CA_CERTS',
]);

/**
 * .what = why an env mask is not one (a bad name, a host list that is empty or holds a bad pattern), or null when it is
 * .why = a bad entry is the caller's mistake, caught where it is given (a flag, a settings file, the library's option)
 */
export const checkEnvMask = (mask: EnvMask): string | null => {
  for (const [name, hosts] of Object.entries(mask)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `${JSON.stringify(name)} is not a variable to mask: give ${MASKED_NAME_EXPECTS}`;
    if (SANDBOX_SET_VARIABLES.has(name))
      return `${name} cannot be masked: bhrain sets it inside the sandbox (the proxy and the run's CA); mask the credential itself`;
    if (!Array.isArray(hosts) || !hosts.length)
      return `${name} is masked for no host: name the hosts its value may go to, e.g. ${name}=api.github.com,github.com`;
    for (const host of hosts) {
      const wrong = checkDomainPattern(host);
      if (wrong) return `${name}: ${wrong}`;
    }
  }
  return null;
};

/** .what = the hosts of an env mask, normalized and without repeats, in the order given: they are allowed domains too */
export const hostsOfEnvMask = (mask: EnvMask): string[] => [...new Set(Object.values(mask).flat().map(normalizeDomainPattern))];

/**
 * .what = the masked credentials of a run: each variable of the mask that is set, with a placeholder of its own; the
 *         names that are not set (nothing to protect: the caller warns) apart
 * .why = one place makes the placeholders, so the proxy (which writes the values) and the sandbox's environment (which
 *        holds the placeholders) agree; a value no HTTP header can carry (a line break, a control character) is refused
 *        here, loudly, not at the first request
 */
export const genMaskedCredentials = (
  input: { mask: EnvMask },
  context: { env: Record<string, string | undefined> },
): { credentials: MaskedCredential[]; unset: string[] } => {
  const credentials: MaskedCredential[] = [];
  const unset: string[] = [];
  for (const [name, hosts] of Object.entries(input.mask)) {
    const value = context.env[name];
    if (!value) {
      unset.push(name);
      continue;
    }
    if (/[\0-\x1f\x7f]/.test(value))
      throw new BadRequestError(
        `${name} cannot be masked: its value holds a line break or another control character, which no HTTP header can carry; unset it, or leave it unmasked`,
      );
    credentials.push({
      name,
      placeholder: `bhrain-masked-${name}-${randomBytes(12).toString('hex')}`,
      value,
      hosts: [...new Set(hosts.map(normalizeDomainPattern))],
    });
  }
  return { credentials, unset };
};

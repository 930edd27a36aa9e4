import { isIP } from 'node:net';

/** .what = what an allowed-domain pattern must be, for the messages that reject one */
export const DOMAIN_PATTERN_EXPECTS =
  'a host name (api.example.com) or *. before a domain (*.example.com: any subdomain of example.com, at any depth, but not example.com itself; list both to allow both)';

// a label as DNS names allow it (with _, which some service names use); at most 63 characters
const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/**
 * .what = why a string is not an allowed-domain pattern, with a hint where one helps, or null when it is one
 * .why = a bad pattern is the caller's mistake, caught where it is given (a flag, a settings file, the library's
 *        sandbox option), so the error names that place and says what is valid
 */
export const checkDomainPattern = (pattern: string): string | null => {
  const given = pattern.trim().toLowerCase();
  const hint =
    given === '*'
      ? ': to let bash reach every host, use --allow-network (allowNetwork) instead'
      : given.includes('://')
        ? ': give the host alone, without the scheme'
        : /[/?#]/.test(given)
          ? ': give the host alone, without a path'
          : given.includes(':') || given.includes('[')
            ? ': give the host alone, without a port (every port of an allowed host is allowed); IPv6 addresses are not taken'
            : given.includes('*') && !given.startsWith('*.')
              ? ': a * stands only at the start, as a whole label (*.example.com)'
              : '';
  const host = given.startsWith('*.') ? given.slice(2) : given;
  if (!hint && host.length <= 253 && HOST_NAME.test(host)) return null;
  return `${JSON.stringify(pattern)} is not a domain pattern${hint}; give ${DOMAIN_PATTERN_EXPECTS}`;
};

/** .what = a pattern as the proxy compares it: trimmed, lower case */
export const normalizeDomainPattern = (pattern: string): string => pattern.trim().toLowerCase();

/** .what = a host as a request names it, as the proxy compares it: lower case, without IPv6 brackets or one trailing dot */
export const normalizeHost = (host: string): string =>
  host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');

/**
 * .what = the pattern that allows a host, and whether it allows it by its exact name, or null when none does
 * .why = `*.example.com` is any subdomain of example.com at any depth, never example.com itself, and never an IP
 *        address (`*.0.0.1` names no domain); the proxy treats a name allowed only by a wildcard more warily
 */
export const matchAllowedDomain = (host: string, patterns: readonly string[]): { pattern: string; exact: boolean } | null => {
  const name = normalizeHost(host);
  for (const pattern of patterns) if (pattern === name) return { pattern, exact: true };
  if (isIP(name)) return null;
  for (const pattern of patterns)
    if (pattern.startsWith('*.') && name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1) return { pattern, exact: false };
  return null;
};

import { describe, expect, it } from 'vitest';

import { checkDomainPattern, matchAllowedDomain } from './allowedDomains.js';

// the network opens by domain; a pattern is an exact host name or *. before a domain

describe('network by domain: which patterns are taken', () => {
  it('given host names and wildcards, then each is taken', () => {
    for (const pattern of [
      'example.com',
      'api.example.com',
      'localhost',
      'allowed.test',
      '*.example.com',
      '*.co.uk',
      'Registry.NPMJS.org',
      '_service.example.com',
      '10.0.0.5',
    ])
      expect(checkDomainPattern(pattern), pattern).toBeNull();
  });

  it('given a scheme, a port, a path, a lone * or a * inside a name, then it is refused with what is valid and a hint', () => {
    expect(checkDomainPattern('https://example.com')).toBe(
      '"https://example.com" is not a domain pattern: give the host alone, without the scheme; give a host name (api.example.com) or *. before a domain (*.example.com: any subdomain of example.com, at any depth, but not example.com itself; list both to allow both)',
    );
    expect(checkDomainPattern('example.com:443')).toMatch(
      /^"example\.com:443" is not a domain pattern: give the host alone, without a port \(every port of an allowed host is allowed\)/,
    );
    expect(checkDomainPattern('example.com/x')).toMatch(/without a path/);
    expect(checkDomainPattern('*')).toMatch(/use --allow-network \(allowNetwork\) instead/);
    expect(checkDomainPattern('a.*.com')).toMatch(/a \* stands only at the start, as a whole label/);
    expect(checkDomainPattern('*example.com')).toMatch(/a \* stands only at the start/);
    for (const pattern of ['', '*.', 'exa mple.com', '-x.com', 'x..com', '[::1]', `${'a'.repeat(64)}.com`])
      expect(checkDomainPattern(pattern), pattern).toMatch(/is not a domain pattern/);
  });
});

describe('network by domain: which hosts a pattern allows', () => {
  it('given an exact name, then only that name, in any case and with a trailing dot', () => {
    expect(matchAllowedDomain('allowed.test', ['allowed.test'])).toEqual({ pattern: 'allowed.test', exact: true });
    expect(matchAllowedDomain('ALLOWED.test.', ['allowed.test'])).toEqual({ pattern: 'allowed.test', exact: true });
    expect(matchAllowedDomain('sub.allowed.test', ['allowed.test'])).toBeNull();
    expect(matchAllowedDomain('allowed.test.evil', ['allowed.test'])).toBeNull();
  });

  it('given *.example.com, then any subdomain at any depth, never example.com itself nor a name that only ends alike', () => {
    const patterns = ['*.example.com'];
    expect(matchAllowedDomain('a.example.com', patterns)).toEqual({ pattern: '*.example.com', exact: false });
    expect(matchAllowedDomain('a.b.example.com', patterns)).toEqual({ pattern: '*.example.com', exact: false });
    expect(matchAllowedDomain('example.com', patterns)).toBeNull();
    expect(matchAllowedDomain('evilexample.com', patterns)).toBeNull();
    expect(matchAllowedDomain('.example.com', patterns)).toBeNull();
    expect(matchAllowedDomain('example.com.evil.org', patterns)).toBeNull();
  });

  it('given both the domain and its wildcard, then both, the apex by its exact pattern', () => {
    expect(matchAllowedDomain('example.com', ['*.example.com', 'example.com'])).toEqual({ pattern: 'example.com', exact: true });
  });

  it('given an IP address, then only a pattern naming that address allows it: a wildcard never does', () => {
    expect(matchAllowedDomain('127.0.0.3', ['*.0.0.3'])).toBeNull();
    expect(matchAllowedDomain('127.0.0.3', ['127.0.0.3'])).toEqual({ pattern: '127.0.0.3', exact: true });
    expect(matchAllowedDomain('[::1]', ['*.1'])).toBeNull();
  });
});

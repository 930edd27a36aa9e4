import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { genMaskedCredentials, type MaskedCredential } from './genMaskedCredentials.js';
import { unmaskHeaders } from './unmaskHeaders.js';

// the one place a masked value enters a request: every placeholder of the credentials given, anywhere in a header's text
// and inside Basic credentials, becomes its value; nothing else changes

const { credentials } = genMaskedCredentials(
  { mask: { GH_TOKEN: ['github.com'], NPM_TOKEN: ['registry.npmjs.org'] } },
  { env: { GH_TOKEN: 'ghs_real/Token+Value=', NPM_TOKEN: 'npm_réal-valué' } },
);
const [gh, npm] = credentials;
const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;
const unbasic = (header: unknown) => Buffer.from(String(header).replace(/^Basic /, ''), 'base64').toString('utf8');

describe('unmaskHeaders', () => {
  it('given a placeholder as a bearer token, a token and in a cookie, then each is the value', () => {
    const headers = unmaskHeaders(
      {
        authorization: `Bearer ${gh.placeholder}`,
        'x-api-token': `token ${gh.placeholder}`,
        cookie: [`a=${gh.placeholder}; b=1`, 'c=2'],
        'content-length': 12,
      },
      credentials,
    );
    expect(headers).toEqual({
      authorization: 'Bearer ghs_real/Token+Value=',
      'x-api-token': 'token ghs_real/Token+Value=',
      cookie: ['a=ghs_real/Token+Value=; b=1', 'c=2'],
      'content-length': 12,
    });
  });

  it('given Basic credentials with a placeholder as the password or the user, then they are decoded, written and encoded again', () => {
    expect(unbasic(unmaskHeaders({ authorization: basic(`x-access-token:${gh.placeholder}`) }, credentials).authorization)).toBe(
      'x-access-token:ghs_real/Token+Value=',
    );
    expect(unbasic(unmaskHeaders({ authorization: basic(`${npm.placeholder}:x`) }, credentials).authorization)).toBe('npm_réal-valué:x');
  });

  it('given several placeholders in one header, then each is its own value', () => {
    expect(unmaskHeaders({ 'x-both': `${gh.placeholder},${npm.placeholder},${gh.placeholder}` }, credentials)['x-both']).toBe(
      'ghs_real/Token+Value=,npm_réal-valué,ghs_real/Token+Value=',
    );
    expect(unbasic(unmaskHeaders({ authorization: basic(`${gh.placeholder}:${npm.placeholder}`) }, credentials).authorization)).toBe(
      'ghs_real/Token+Value=:npm_réal-valué',
    );
  });

  it('given only the credentials masked for the host, then a placeholder of another stays as it is', () => {
    const headers = unmaskHeaders({ authorization: `Bearer ${npm.placeholder}`, 'x-gh': gh.placeholder }, [gh]);
    expect(headers).toEqual({ authorization: `Bearer ${npm.placeholder}`, 'x-gh': 'ghs_real/Token+Value=' });
  });

  it('given Basic credentials without a placeholder, then the header is left byte for byte (not encoded again)', () => {
    expect(unmaskHeaders({ authorization: 'basic  dXNlcjpwYXNz ' }, credentials).authorization).toBe('basic  dXNlcjpwYXNz ');
  });

  it('given generated headers with placeholders anywhere, then no placeholder of theirs is left, and the text around them is kept', () => {
    const pieces = fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.constant(gh.placeholder), fc.constant(npm.placeholder)), {
      maxLength: 6,
    });
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/), pieces), fc.boolean(), (given, asBasic) => {
        const text = Object.fromEntries(Object.entries(given).map(([name, parts]) => [name, parts.join('')]));
        const sent = asBasic ? Object.fromEntries(Object.entries(text).map(([name, value]) => [name, basic(value)])) : text;
        const got = unmaskHeaders(sent, credentials);
        const expected = (value: string) => value.split(gh.placeholder).join(gh.value).split(npm.placeholder).join(npm.value);
        for (const [name, value] of Object.entries(text)) {
          const out = asBasic ? unbasic(got[name]) : String(got[name]);
          expect(out).toBe(expected(value));
          for (const credential of credentials as MaskedCredential[]) expect(String(got[name])).not.toContain(credential.placeholder);
        }
      }),
    );
  });
});

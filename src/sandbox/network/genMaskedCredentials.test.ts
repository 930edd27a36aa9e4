import { describe, expect, it } from 'vitest';

import { BadRequestError } from '../../core/contract/errors.js';
import { checkEnvMask, genMaskedCredentials, hostsOfEnvMask } from './genMaskedCredentials.js';

describe('genMaskedCredentials', () => {
  it('given masked variables that are set, then each gets a placeholder of its own that names it and is clearly not the value', () => {
    const env = { GH_TOKEN: 'ghs_secret', NPM_TOKEN: 'npm_secret' };
    const { credentials, unset } = genMaskedCredentials(
      { mask: { GH_TOKEN: ['API.github.com', 'github.com'], NPM_TOKEN: ['registry.npmjs.org'] } },
      { env },
    );
    expect(unset).toEqual([]);
    expect(credentials.map(({ name, value, hosts }) => ({ name, value, hosts }))).toEqual([
      { name: 'GH_TOKEN', value: 'ghs_secret', hosts: ['api.github.com', 'github.com'] },
      { name: 'NPM_TOKEN', value: 'npm_secret', hosts: ['registry.npmjs.org'] },
    ]);
    expect(credentials[0].placeholder).toMatch(/^bhrain-masked-GH_TOKEN-[0-9a-f]{24}$/);
    expect(credentials[1].placeholder).toMatch(/^bhrain-masked-NPM_TOKEN-[0-9a-f]{24}$/);
  });

  it('given two runs, then their placeholders differ', () => {
    const make = () => genMaskedCredentials({ mask: { GH_TOKEN: ['github.com'] } }, { env: { GH_TOKEN: 'x' } }).credentials[0].placeholder;
    expect(make()).not.toBe(make());
  });

  it('given a masked variable that is not set, or empty, then it is named apart: nothing to protect', () => {
    const { credentials, unset } = genMaskedCredentials({ mask: { GH_TOKEN: ['github.com'], EMPTY: ['x.com'] } }, { env: { EMPTY: '' } });
    expect(credentials).toEqual([]);
    expect(unset).toEqual(['GH_TOKEN', 'EMPTY']);
  });

  it('given a value no header can carry (a line break), then a bad request that names the variable', () => {
    expect(() => genMaskedCredentials({ mask: { KEY: ['x.com'] } }, { env: { KEY: 'line one\nline two' } })).toThrow(BadRequestError);
    expect(() => genMaskedCredentials({ mask: { KEY: ['x.com'] } }, { env: { KEY: 'a\rb' } })).toThrow(
      /^KEY cannot be masked: its value holds a line break/,
    );
  });
});

describe('checkEnvMask', () => {
  it('given good entries, then null; their hosts, without repeats, are what the network reaches', () => {
    const mask = { GH_TOKEN: ['api.github.com', 'github.com'], GITHUB_TOKEN: ['github.com', '*.github.com'] };
    expect(checkEnvMask(mask)).toBeNull();
    expect(hostsOfEnvMask(mask)).toEqual(['api.github.com', 'github.com', '*.github.com']);
  });

  it.each([
    [{ 'GH-TOKEN': ['github.com'] }, '"GH-TOKEN" is not a variable to mask: give an environment variable name'],
    [{ '1X': ['github.com'] }, '"1X" is not a variable to mask'],
    [{ HTTPS_PROXY: ['github.com'] }, 'HTTPS_PROXY cannot be masked: bhrain sets it inside the sandbox'],
    [{ SSL_CERT_FILE: ['github.com'] }, 'SSL_CERT_FILE cannot be masked'],
    [{ GH_TOKEN: [] }, 'GH_TOKEN is masked for no host: name the hosts its value may go to, e.g. GH_TOKEN=api.github.com,github.com'],
    [
      { GH_TOKEN: ['https://github.com'] },
      'GH_TOKEN: "https://github.com" is not a domain pattern: give the host alone, without the scheme',
    ],
    [{ GH_TOKEN: ['*'] }, 'GH_TOKEN: "*" is not a domain pattern'],
  ])('given %j, then why, naming the entry', (mask, why) => {
    expect(checkEnvMask(mask)).toContain(why);
  });
});

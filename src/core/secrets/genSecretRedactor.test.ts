import { describe, expect, it } from 'vitest';

import { genSecretRedactor } from './genSecretRedactor.js';

// secrets shaped to beat an encoder: quotes, backslashes, newlines, control characters and unicode
const env = {
  FOO_API_KEY: 'sk-"dq"-7Hq2Lm9Pz4Xw',
  FOO_TOKEN: 'tk\\bs\\Qr8Vn3Jd6Ty',
  DB_PASSWORD: "pw'sq\nline2-Mz5Kc8Rb",
  BAR_SECRET: 'ünï-秘密-🔑-Gv4Hs7Wn',
  CTL_TOKEN: 'tab\there\u0001ctl-Np3Dy6Fk',
  SHORT_TOKEN: 'abc1234',
  PATH: '/usr/local/bin:/usr/bin:/bin',
};
const secretNames = ['FOO_API_KEY', 'FOO_TOKEN', 'DB_PASSWORD', 'BAR_SECRET', 'CTL_TOKEN'] as const;
const escaped = (value: string) => JSON.stringify(value).slice(1, -1);
const asciiEscaped = (value: string) =>
  escaped(value).replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('genSecretRedactor', () => {
  const redact = genSecretRedactor(env);

  it('each secret is replaced raw, JSON-escaped, escaped twice (JSON in JSON), and escaped with ASCII only', () => {
    for (const name of secretNames) {
      const value = env[name];
      for (const form of [value, escaped(value), escaped(escaped(value)), asciiEscaped(value)])
        expect(redact(`before ${form} after ${form}`), `${name} as ${form}`).toBe(`before [redacted:${name}] after [redacted:${name}]`);
    }
  });

  it('text that was JSON-encoded after the secret went in holds no secret once redacted (an SDK error quoting a body)', () => {
    const message = `400 ${JSON.stringify({ error: { message: `bad key ${env.FOO_API_KEY} for ${env.DB_PASSWORD}` } })}`;
    expect(redact(message)).toBe('400 {"error":{"message":"bad key [redacted:FOO_API_KEY] for [redacted:DB_PASSWORD]"}}');
  });

  it('a secret that contains another is replaced whole; values under 8 characters and vars not named like secrets are kept', () => {
    const nested = genSecretRedactor({ INNER_TOKEN: 'inner-0123456', OUTER_TOKEN: 'outer-inner-0123456-end' });
    expect(nested('x outer-inner-0123456-end y inner-0123456')).toBe('x [redacted:OUTER_TOKEN] y [redacted:INNER_TOKEN]');
    expect(redact(`${env.SHORT_TOKEN} ${env.PATH}`)).toBe(`${env.SHORT_TOKEN} ${env.PATH}`);
  });

  it('with no secret in the environment, text is returned as it is', () => {
    const none = genSecretRedactor({ PATH: env.PATH, HOME: '/home/someone' });
    expect(none('any "text" \\ here')).toBe('any "text" \\ here');
    expect(none.head('text cut here')).toBe('text cut here');
  });

  it('at a cut, head and tail replace the longest piece of a secret left there, raw or escaped, down to 4 characters', () => {
    expect(redact.head(`shown: ${env.FOO_API_KEY.slice(0, 14)}`)).toBe('shown: [redacted:FOO_API_KEY]');
    expect(redact.head(`shown: ${escaped(env.FOO_TOKEN).slice(0, 9)}`)).toBe('shown: [redacted:FOO_TOKEN]');
    expect(redact.tail(`${env.DB_PASSWORD.slice(-10)} kept`)).toBe('[redacted:DB_PASSWORD] kept');
    expect(redact.tail(`${escaped(env.CTL_TOKEN).slice(-12)} kept`)).toBe('[redacted:CTL_TOKEN] kept');
    // three characters tell nothing; and text not at a secret's edge is kept
    expect(redact.head(`shown: ${env.FOO_API_KEY.slice(0, 3)}`)).toBe(`shown: ${env.FOO_API_KEY.slice(0, 3)}`);
    expect(redact.head('shown: nothing secret')).toBe('shown: nothing secret');
  });

  it('at a cut, the longest piece wins when pieces of two secrets end the text, whichever secret is longer', () => {
    const cut = genSecretRedactor({ LONG_TOKEN: 'ABCDEFGH-rest-of-long', EDGE_TOKEN: 'EFGH-0123456789-0123456789-more' });
    expect(cut.head('text ABCDEFGH')).toBe('text [redacted:LONG_TOKEN]');
  });
});

import type { OutgoingHttpHeaders } from 'node:http';

import type { MaskedCredential } from './genMaskedCredentials.js';

/** .what = `Basic <base64>`, as an Authorization header carries user:password (git's URL userinfo, npm's _auth) */
const BASIC_AUTH = /^(\s*basic\s+)([A-Za-z0-9+/=_-]+)(\s*)$/i;

/** .what = text with every placeholder replaced by its value (split and join: a value is never read as a pattern) */
const replaceAll = (text: string, credentials: readonly Pick<MaskedCredential, 'placeholder' | 'value'>[]): string =>
  credentials.reduce(
    (done, credential) => (done.includes(credential.placeholder) ? done.split(credential.placeholder).join(credential.value) : done),
    text,
  );

/**
 * .what = one header value with the placeholders in it replaced: anywhere in the text (`Bearer <placeholder>`, `token
 *         <placeholder>`, a cookie), and inside `Basic` credentials, decoded, replaced and encoded again
 * .note = Basic's user:password is bytes: decoded as latin1 (every byte kept as is), the value written as UTF-8 bytes
 */
const unmaskValue = (value: string, credentials: readonly Pick<MaskedCredential, 'placeholder' | 'value'>[]): string => {
  const basic = BASIC_AUTH.exec(value);
  if (basic) {
    const decoded = Buffer.from(basic[2], 'base64').toString('latin1');
    const latin1Values = credentials.map((credential) => ({
      placeholder: credential.placeholder,
      value: Buffer.from(credential.value, 'utf8').toString('latin1'),
    }));
    const replaced = replaceAll(decoded, latin1Values);
    if (replaced !== decoded) return `${basic[1]}${Buffer.from(replaced, 'latin1').toString('base64')}${basic[3]}`;
  }
  return replaceAll(value, credentials);
};

/**
 * .what = a request's headers with the placeholders of the given credentials replaced by their values
 * .why = the one place a masked value enters a request: the proxy calls it only for a request to a host the credential
 *        is masked for, over TLS it terminated (a placeholder for another host, or in the body, is sent as it is)
 */
export const unmaskHeaders = (headers: OutgoingHttpHeaders, credentials: readonly MaskedCredential[]): OutgoingHttpHeaders => {
  const unmask = (value: string): string => unmaskValue(value, credentials);
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      typeof value === 'string' ? unmask(value) : Array.isArray(value) ? value.map(unmask) : value,
    ]),
  );
};

import { createHash } from 'node:crypto';

/** .what = hex sha256 of a utf8 string; the content fingerprint of every brain literal */
export const sha256hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

import { createHash } from 'node:crypto';

/** .what = hex sha256 of a utf8 string; the content fingerprint of every brain literal */
export const sha256hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** .what = one field of a hashed literal: a text, an absent id, or a list of fields (hashes, summaries, tool calls) */
export type BrainHashField = string | null | readonly BrainHashField[];

/**
 * .what = hex sha256 of a fixed-order list of fields, encoded as a JSON array (canonical: no object keys, no numbers)
 * .why = unambiguous: each string is quoted and escaped, so no text can move from one field into the next and keep
 *        the hash (schemaVersion 1 joined fields with "\n", so "a\nb" + "c" and "a" + "b\nc" hashed alike); lone
 *        surrogates are escaped by JSON.stringify, so they do not collapse into U+FFFD either
 */
export const sha256hexOfFields = (fields: readonly BrainHashField[]): string => sha256hex(JSON.stringify(fields));

import { SUPPLIER_KEY_ENV_VARS } from '../contract/supplierTable.js';

/** names of env vars whose values are secrets */
const SECRET_NAME = /(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH)/i;
/** shorter values are too likely to occur by chance to be worth replacing */
const MIN_SECRET_CHARS = 8;

/** .what = an environment without bhrain's supplier keys, for the shells the model runs */
export const withoutSupplierKeys = (env: Record<string, string | undefined>): Record<string, string | undefined> => {
  const kept = { ...env };
  for (const name of SUPPLIER_KEY_ENV_VARS) delete kept[name];
  return kept;
};

/** .what = a value as it sits inside a JSON string */
const jsonEscaped = (value: string): string => JSON.stringify(value).slice(1, -1);

/**
 * .what = the forms a secret takes in text: raw; JSON-escaped once (a record, an SDK error quoting a body) and twice
 *         (JSON inside JSON: tool-call arguments, an error body in a JSON line); and escaped with ASCII only (python, jq -a)
 * .why = an encoder turns `"`, `\`, newlines and control characters into escapes, and the raw value no longer matches
 */
const formsOf = (value: string): string[] => {
  const once = jsonEscaped(value);
  const ascii = once.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [...new Set([value, once, jsonEscaped(once), ascii])];
};

/** a base64 form shorter than this is left alone: too likely to occur by chance */
const MIN_BASE64_FORM_CHARS = 8;

/**
 * .what = the base64 text a secret becomes inside any base64-encoded text, at each of the 3 byte alignments it can
 *         start at (the characters fully set by the secret's own bytes), standard and URL-safe
 * .why = `cat .git/config | base64`, or a basic auth header around a token, carries the secret in a form its raw value
 *        no longer matches
 */
const base64FormsOf = (value: string): string[] => {
  const bytes = Buffer.from(value, 'utf8');
  const forms: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // the first group holds bytes before the secret when shifted, the last partial one bytes after it
    const form = encoded.slice(shift ? 4 : 0, Math.floor((shift + bytes.length) / 3) * 4);
    if (form.length >= MIN_BASE64_FORM_CHARS) forms.push(form, form.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
};

/** .what = a secret bhrain knows besides the environment's, with the name it is redacted as (`[redacted:<name>]`) */
export interface KnownSecret {
  name: string;
  value: string;
}

/**
 * .what = every form of the secrets with its name, longest first, so a secret that contains another is replaced whole:
 *         the env's secret-looking values and the known secrets (the repository's git credentials), each raw, escaped
 *         (formsOf) and in base64 (base64FormsOf)
 */
const secretFormsOf = (env: Record<string, string | undefined>, known: readonly KnownSecret[] = []): Array<[string, string]> =>
  [
    ...Object.entries(env).filter(
      (entry): entry is [string, string] =>
        SECRET_NAME.test(entry[0]) && typeof entry[1] === 'string' && entry[1].length >= MIN_SECRET_CHARS,
    ),
    ...known.filter((secret) => secret.value.length >= MIN_SECRET_CHARS).map((secret): [string, string] => [secret.name, secret.value]),
  ]
    .flatMap(([name, value]) => [...new Set([...formsOf(value), ...base64FormsOf(value)])].map((form): [string, string] => [name, form]))
    .sort((a, b) => b[1].length - a[1].length);

/** a piece of a secret at least this long, left at a cut, is redacted; a shorter one tells nothing */
const MIN_SECRET_PIECE_CHARS = 4;

/** .what = the longest piece of a secret form that `matches` accepts, with its length, or null */
const longestPiece = (
  forms: ReadonlyArray<[string, string]>,
  text: string,
  pieceOf: (form: string, length: number) => string,
  matches: (piece: string) => boolean,
): { name: string; length: number } | null => {
  let found: { name: string; length: number } | null = null;
  for (const [name, form] of forms)
    for (
      let length = Math.min(form.length - 1, text.length);
      length >= Math.max(MIN_SECRET_PIECE_CHARS, (found?.length ?? 0) + 1);
      length--
    )
      if (matches(pieceOf(form, length))) {
        found = { name, length };
        break;
      }
  return found;
};

/**
 * .what = redacts the piece of a secret left at a cut: a head that ends with a secret's start, a tail that begins with its end
 * .why = a capture that drops the middle of a stream (bash keeps head and tail), or a line shortened for display, can
 *        cut a secret in two, and neither half matches the whole value the redactor looks for
 */
export const genCutSecretRedactor = (env: Record<string, string | undefined>, known: readonly KnownSecret[] = []) => {
  const forms = secretFormsOf(env, known);
  return {
    head: (text: string): string => {
      const found = longestPiece(
        forms,
        text,
        (form, length) => form.slice(0, length),
        (piece) => text.endsWith(piece),
      );
      return found ? `${text.slice(0, text.length - found.length)}[redacted:${found.name}]` : text;
    },
    tail: (text: string): string => {
      const found = longestPiece(
        forms,
        text,
        (form, length) => form.slice(form.length - length),
        (piece) => text.startsWith(piece),
      );
      return found ? `[redacted:${found.name}]${text.slice(found.length)}` : text;
    },
  };
};

/**
 * .what = replaces secrets in text; `head` and `tail` also replace the piece of one left where the text was cut
 * .why = one value carries both, so whoever cuts text (a progress line, a truncated output) has the cut redaction at hand
 */
export interface SecretRedactor {
  (text: string): string;
  /** for text cut after its end: a secret's start that it ends with is replaced */
  head: (text: string) => string;
  /** for text cut before its start: a secret's end that it begins with is replaced */
  tail: (text: string) => string;
}

/** .what = a regex source that matches the text literally */
const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * .what = replaces the values of secret-looking env vars (…_API_KEY, …TOKEN, …SECRET, …PASSWORD) and the known secrets
 *         (the repository's git credentials: readGitCredentials) with `[redacted:NAME]`, raw, JSON-escaped or in base64
 * .why = a secret that reaches a tool's output would travel to the LLM supplier, the logs, the run records and the
 *        refs store; redacting where text enters the conversation and before it is encoded or cut keeps it out of all of them
 */
export const genSecretRedactor = (env: Record<string, string | undefined>, known: readonly KnownSecret[] = []): SecretRedactor => {
  const forms = secretFormsOf(env, known);
  const nameOf = new Map(forms.map(([name, form]) => [form, name]));
  // one pass over the text; alternatives longest first, so the longest form starting at a position wins
  const pattern = forms.length ? new RegExp(forms.map(([, form]) => literally(form)).join('|'), 'g') : null;
  const redact = (text: string): string => (pattern ? text.replace(pattern, (form) => `[redacted:${nameOf.get(form)}]`) : text);
  return Object.assign(redact, genCutSecretRedactor(env, known));
};

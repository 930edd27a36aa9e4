/**
 * .what = Headers and Response as the SDKs and nodeHttpFetch use them, plus Request and FormData as stand-ins that
 *         build node's own on demand; injected by the CLI bundle (scripts/bundleCli.js) in place of the globals
 * .why = node defines these four globals lazily: the first touch of any of them loads undici's JavaScript, ~40 ms on
 *        node 20 and ~47 ms on node 24, a fifth of a one-turn answer. The SDKs build a Headers for every request and
 *        check `body instanceof FormData`, so a run touches them whatever fetch it uses. headers-polyfill, the kept
 *        library, touches globalThis.Headers in its constructor, which loads undici all the same
 * .note = `instanceof` accepts node's own objects too (by their Symbol.toStringTag), so code that meets a real Headers or
 *         Response (the MCP SDK's, from the global fetch) sees one; the library, unbundled, uses node's classes
 */

const isTagged = (value: unknown, tag: string): boolean =>
  typeof value === 'object' && value !== null && Object.prototype.toString.call(value) === `[object ${tag}]`;

// RFC 9110 token characters for a name; a value may not hold NUL, CR or LF (as undici rejects them)
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE_FORBIDDEN = /[\0\r\n]/;

const normalizeName = (name: string): string => {
  const text = String(name);
  if (!HEADER_NAME.test(text)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(text)}`);
  return text.toLowerCase();
};

const normalizeValue = (value: string): string => {
  // leading and trailing HTTP whitespace is dropped, as the Fetch standard says
  const text = String(value).replace(/^[\t ]+|[\t ]+$/g, '');
  if (HEADER_VALUE_FORBIDDEN.test(text)) throw new TypeError(`Headers: invalid header value ${JSON.stringify(text)}`);
  return text;
};

type HeadersInitLike = Headers | Iterable<readonly [string, string]> | Record<string, string> | undefined | null;

/** .what = the Fetch standard's Headers: case-insensitive names, values of one name joined by ", ", set-cookie kept apart */
export class Headers {
  // name (lower case) → its values in order
  readonly #values = new Map<string, string[]>();

  public constructor(init?: HeadersInitLike) {
    if (init === undefined || init === null) return;
    if (typeof (init as Iterable<unknown>)[Symbol.iterator] === 'function') {
      for (const pair of init as Iterable<readonly [string, string]>) {
        if (pair.length !== 2) throw new TypeError('Headers: each header of the init must be a [name, value] pair');
        this.append(pair[0], pair[1]);
      }
      return;
    }
    for (const [name, value] of Object.entries(init)) this.append(name, value);
  }

  public append(name: string, value: string): void {
    const key = normalizeName(name);
    const text = normalizeValue(value);
    const values = this.#values.get(key);
    if (values) values.push(text);
    else this.#values.set(key, [text]);
  }

  public set(name: string, value: string): void {
    this.#values.set(normalizeName(name), [normalizeValue(value)]);
  }

  public delete(name: string): void {
    this.#values.delete(normalizeName(name));
  }

  public has(name: string): boolean {
    return this.#values.has(normalizeName(name));
  }

  public get(name: string): string | null {
    return this.#values.get(normalizeName(name))?.join(', ') ?? null;
  }

  public getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])];
  }

  /** sorted by name; set-cookie once per value, every other name once with its values joined */
  public *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name)!;
      if (name === 'set-cookie') for (const value of values) yield [name, value];
      else yield [name, values.join(', ')];
    }
  }

  public *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  public *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  public forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  public [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  public get [Symbol.toStringTag](): string {
    return 'Headers';
  }

  public static [Symbol.hasInstance](value: unknown): boolean {
    return isTagged(value, 'Headers');
  }
}

/** .what = a Response over a web stream, as nodeHttpFetch builds one: status, headers, and its body read once */
export class Response {
  public readonly status: number;
  public readonly statusText: string;
  public readonly headers: Headers;
  public readonly ok: boolean;
  public readonly url = '';
  public readonly redirected = false;
  public readonly type = 'default';
  #body: ReadableStream<Uint8Array> | null;
  #bodyUsed = false;

  public constructor(
    body: ReadableStream<Uint8Array> | null,
    init: { status?: number; statusText?: string; headers?: HeadersInitLike } = {},
  ) {
    this.#body = body;
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? '';
    // a copy, as node's Response takes one
    this.headers = new Headers(init.headers);
    this.ok = this.status >= 200 && this.status <= 299;
  }

  public get body(): ReadableStream<Uint8Array> | null {
    return this.#body;
  }

  public get bodyUsed(): boolean {
    return this.#bodyUsed;
  }

  public async arrayBuffer(): Promise<ArrayBuffer> {
    // as node's: a response without a body reads as empty, as often as asked, and is never `bodyUsed`
    if (!this.#body) return new ArrayBuffer(0);
    if (this.#bodyUsed || this.#body.locked) throw new TypeError('Response: the body has already been read');
    this.#bodyUsed = true;
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.#body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  public async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }

  /** as node's: typed by the content-type header (the openai SDK reads a streamed upload this way) */
  public async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get('content-type') ?? '' });
  }

  public async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** the body splits in two (a tee): this response keeps one branch, the clone gets the other */
  public clone(): Response {
    if (this.#bodyUsed || this.#body?.locked) throw new TypeError('Response: cannot clone a response whose body has been read');
    const [mine, theirs] = this.#body ? this.#body.tee() : [null, null];
    this.#body = mine;
    return new Response(theirs, { status: this.status, statusText: this.statusText, headers: new Headers(this.headers) });
  }

  public get [Symbol.toStringTag](): string {
    return 'Response';
  }

  public static [Symbol.hasInstance](value: unknown): boolean {
    return isTagged(value, 'Response');
  }
}

/**
 * .what = a class whose `instanceof` tells node's own objects by their tag, and whose `new` builds node's own class
 * .why = for the globals the bundle only tests against (`body instanceof FormData`) or rarely builds (a file upload)
 */
const onDemand = (tag: 'Request' | 'FormData') =>
  class {
    public constructor(...args: unknown[]) {
      const Real = (globalThis as unknown as Record<string, new (...args: unknown[]) => object>)[tag];
      return new Real(...args);
    }

    public static [Symbol.hasInstance](value: unknown): boolean {
      return isTagged(value, tag);
    }
  };

export const Request = onDemand('Request');
export const FormData = onDemand('FormData');

// the CLI bundle's Headers and Response stand in for node's (which load undici); each is held to node's own
// class on the same operations, so the SDKs see what they would see with node's
import { describe, expect, it } from 'vitest';

import { FormData, Headers, Request, Response } from './leanFetchClasses.js';

/** .what = what a Headers holds, by every way of reading it */
const readAll = (headers: globalThis.Headers | Headers) => ({
  entries: [...headers.entries()],
  iterated: [...headers],
  keys: [...headers.keys()],
  values: [...headers.values()],
  forEach: (() => {
    const seen: string[] = [];
    headers.forEach((value, name) => seen.push(`${name}=${value}`));
    return seen;
  })(),
  get: ['content-type', 'X-Multi', 'set-cookie', 'absent'].map((name) => headers.get(name)),
  has: ['CONTENT-TYPE', 'absent'].map((name) => headers.has(name)),
  setCookies: headers.getSetCookie(),
});

const stream = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start: (controller) => {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe('lean start-up: the bundle Headers behaves as node Headers', () => {
  const inits = {
    record: { 'Content-Type': 'application/json', 'x-multi': '  padded\t' },
    pairs: [
      ['X-Multi', 'one'],
      ['x-multi', 'two'],
      ['Set-Cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['content-type', 'text/plain'],
    ] as [string, string][],
    none: undefined,
  };
  for (const [kind, init] of Object.entries(inits))
    it(`then, built from ${kind} and changed the same way, it reads the same`, () => {
      const lean = new Headers(init);
      const real = new globalThis.Headers(init);
      for (const headers of [lean, real]) {
        headers.append('Accept', 'a');
        headers.append('accept', 'b');
        headers.set('X-Set', 'only');
        headers.append('x-set', 'more');
        headers.delete('ACCEPT');
        headers.append('anthropic-beta', 'x');
      }
      expect(readAll(lean)).toEqual(readAll(real));
    });

  it('then it is built from a node Headers, and node builds one from it', () => {
    const real = new globalThis.Headers([
      ['a', '1'],
      ['set-cookie', 'c=1'],
      ['set-cookie', 'd=2'],
    ]);
    expect(readAll(new Headers(real))).toEqual(readAll(real));
    expect(readAll(new globalThis.Headers(new Headers(real)))).toEqual(readAll(real));
  });

  for (const [name, value] of [
    ['bad name', 'v'],
    ['', 'v'],
    ['x-ok', 'line\r\nInjected: yes'],
    ['x-ok', 'nul\0'],
  ])
    it(`then ${JSON.stringify([name, value])} is refused with a TypeError, as node refuses it`, () => {
      expect(() => new globalThis.Headers([[name, value]])).toThrow(TypeError);
      expect(() => new Headers([[name, value]])).toThrow(TypeError);
      expect(() => new Headers().set(name, value)).toThrow(TypeError);
    });

  it("then instanceof tells a Headers, node's or its own, from anything else", () => {
    expect(new globalThis.Headers() instanceof Headers).toBe(true);
    expect(new Headers() instanceof Headers).toBe(true);
    expect({ get: () => null } instanceof Headers).toBe(false);
    expect(Object.prototype.toString.call(new Headers())).toBe('[object Headers]');
  });
});

describe('lean start-up: the bundle Response behaves as node Response', () => {
  const build = (body: () => ReadableStream<Uint8Array> | null, status: number) => [
    new Response(body(), { status, statusText: 'S', headers: { 'content-type': 'application/json' } }),
    new globalThis.Response(body(), { status, statusText: 'S', headers: { 'content-type': 'application/json' } }),
  ];
  const shape = (response: Response | globalThis.Response) => ({
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    url: response.url,
    redirected: response.redirected,
    contentType: response.headers.get('content-type'),
    bodyUsed: response.bodyUsed,
    hasBody: response.body !== null,
  });

  for (const status of [200, 299, 300, 404, 529])
    it(`then a ${status} has the same status, ok flag and headers`, () => {
      const [lean, real] = build(() => stream('{}'), status);
      expect(shape(lean)).toEqual(shape(real));
    });

  it('then its body reads as text, json, bytes or a blob once, and a second read is a TypeError', async () => {
    const readable = async (value: unknown) =>
      value instanceof Blob ? [value.type, await value.text()] : value instanceof ArrayBuffer ? Buffer.from(value).toString() : value;
    for (const read of ['text', 'json', 'arrayBuffer', 'blob'] as const) {
      const [lean, real] = build(() => stream('{"a":', '"é"}'), 200);
      expect(await readable(await lean[read]())).toEqual(await readable(await real[read]()));
      expect(shape(lean)).toEqual(shape(real));
      await expect(lean.text()).rejects.toThrow(TypeError);
      await expect(real.text()).rejects.toThrow(TypeError);
    }
  });

  it('then a response without a body reads as empty', async () => {
    const [lean, real] = build(() => null, 204);
    expect([await lean.text(), shape(lean)]).toEqual([await real.text(), shape(real)]);
  });

  it('then a clone reads the same body as the original, and a read response cannot be cloned', async () => {
    const [lean] = build(() => stream('data: one\n\n', 'data: two\n\n'), 200);
    const copy = lean.clone();
    expect([await copy.text(), await lean.text()]).toEqual(['data: one\n\ndata: two\n\n', 'data: one\n\ndata: two\n\n']);
    expect(() => lean.clone()).toThrow(TypeError);
  });

  it("then instanceof tells a Response, node's or its own, from anything else", () => {
    expect(new globalThis.Response('x') instanceof Response).toBe(true);
    expect(new Response(null) instanceof Response).toBe(true);
    expect({ status: 200 } instanceof Response).toBe(false);
  });
});

describe('lean start-up: Request and FormData build node classes only when used', () => {
  it("then `new` gives node's own object, and instanceof tells node's objects from anything else", () => {
    const form = new FormData();
    expect(form).toBeInstanceOf(globalThis.FormData);
    expect(form instanceof FormData).toBe(true);
    expect(new Request('http://localhost/') instanceof Request).toBe(true);
    expect({} instanceof FormData || ('body' as unknown) instanceof Request || new URL('http://x/') instanceof Request).toBe(false);
  });
});

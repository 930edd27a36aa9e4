/**
 * .what = a copy of a JSON-able value with every string in it, keys too, passed through `redact`
 * .why = a secret must be replaced in its raw form, before JSON.stringify turns its `"` or `\` into escapes that no
 *        longer match; structures are redacted value by value, then encoded
 */
export const redactDeep = <T>(value: T, redact: (text: string) => string): T => {
  const seen = new Map<object, unknown>();
  const visit = (node: unknown): unknown => {
    if (typeof node === 'string') return redact(node);
    if (node === null || typeof node !== 'object') return node;
    // what JSON.stringify would encode (a Date's string), so the copy encodes as the original would
    const encoded = typeof (node as { toJSON?: unknown }).toJSON === 'function' ? (node as { toJSON: () => unknown }).toJSON() : node;
    if (encoded !== node) return visit(encoded);
    if (seen.has(node)) return seen.get(node);
    if (Array.isArray(node)) {
      const copy: unknown[] = [];
      seen.set(node, copy);
      for (const item of node) copy.push(visit(item));
      return copy;
    }
    const copy: Record<string, unknown> = {};
    seen.set(node, copy);
    for (const [key, item] of Object.entries(node)) copy[redact(key)] = visit(item);
    return copy;
  };
  return visit(value) as T;
};

// Token estimate for the stand-in: about 4 UTF-8 bytes per token, over a canonical JSON form.

/** Is `value` a cache breakpoint marker (`{type: "ephemeral", ...}`) rather than content? */
export const isCacheControl = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'ephemeral';

/** Canonical JSON: object keys sorted, `cache_control` markers dropped, so moving a breakpoint keeps fingerprints stable. */
export const canonicalJson = (value: unknown): string => JSON.stringify(canonicalize(value)) ?? 'null';

const canonicalize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const inner = (value as Record<string, unknown>)[key];
    if (key === 'cache_control' && (inner === null || isCacheControl(inner))) continue;
    if (inner === undefined) continue;
    out[key] = canonicalize(inner);
  }
  return out;
};

/** Estimated tokens: ceil(UTF-8 bytes / 4); non-strings are measured as canonical JSON. */
export const estimateTokens = (value: unknown): number => {
  const text = typeof value === 'string' ? value : canonicalJson(value);
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
};

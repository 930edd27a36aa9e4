// Prompt-cache accounting for the stand-in: Anthropic explicit breakpoints and OpenAI automatic prefix caching.
import { createHash } from 'node:crypto';
import { canonicalJson, estimateTokens, isCacheControl } from './tokens.js';

/** One cacheable unit of a prompt (a tool, a system block, a message block or message); `digest` feeds the fingerprint. */
export interface PromptPart {
  /** sha256 of where the part sits and its content in canonical JSON */
  digest: Buffer;
  tokens: number;
  breakpoint: boolean;
  ttl: '5m' | '1h';
  /** OpenAI only: this part ends a whole message, so the prefix up to it may be cached automatically. */
  messageEnd?: boolean;
}

/** Tokens of the generation prompt (the assistant turn's opening) that follow every request's last block. */
export const GENERATION_PROMPT_TOKENS = 3;

/** Usage split of one Anthropic request: input_tokens excludes cache reads and writes, as the real API reports. */
export interface AnthropicCacheUsage {
  total: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h: number;
}

/** Usage split of one OpenAI request: prompt_tokens includes cached_tokens, as the real API reports. */
export interface OpenAICacheUsage {
  prompt: number;
  cached: number;
}

/** How many blocks before a breakpoint the real Anthropic API checks for an earlier cache hit. */
const LOOKBACK_BLOCKS = 20;

/** Find the first cache_control marker anywhere inside a block (e.g. on a nested tool_result text), or undefined. */
const findCacheControl = (value: unknown): { ttl?: unknown } | undefined => {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findCacheControl(item);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'cache_control' && isCacheControl(inner)) return inner as { ttl?: unknown };
    const found = findCacheControl(inner);
    if (found) return found;
  }
  return undefined;
};

/** How many characters of raw JSON the memo keeps before it starts over (the keys are most of its memory) */
const MEMO_LIMIT_CHARS = 32 * 1024 * 1024;

type PartFacts = Pick<PromptPart, 'digest' | 'tokens' | 'breakpoint' | 'ttl'>;
const memo = new Map<string, PartFacts>();
let memoChars = 0;

/**
 * A part's facts: its digest (where it sits, `at`, and its content in canonical JSON, which is also what its tokens are
 * estimated from) and its cache_control marker. Remembered by place and raw JSON: a conversation's blocks come back in
 * every later request, and canonicalizing them again each time was most of the stand-in's own work per request.
 */
const factsOf = (at: string, content: unknown): PartFacts => {
  const raw = `${at}\n${JSON.stringify(content)}`;
  const known = memo.get(raw);
  if (known) return known;
  const canonical = canonicalJson(content);
  const marker = findCacheControl(content);
  const facts: PartFacts = {
    digest: createHash('sha256').update(`${at}\n${canonical}`).digest(),
    tokens: estimateTokens(canonical),
    breakpoint: marker !== undefined,
    ttl: marker?.ttl === '1h' ? '1h' : '5m',
  };
  if (memoChars + raw.length > MEMO_LIMIT_CHARS) {
    memo.clear();
    memoChars = 0;
  }
  memo.set(raw, facts);
  memoChars += raw.length;
  return facts;
};

/** An Anthropic part: a breakpoint where a cache_control marker sits anywhere inside its block. */
const part = (at: string, content: unknown): PromptPart => ({ ...factsOf(at, content) });

/** Anthropic prompt as parts in cache order: tools, then system blocks, then every message content block. */
export const anthropicPromptParts = (body: any): PromptPart[] => {
  const parts: PromptPart[] = [];
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) parts.push(part('tool', tool));
  const system = body?.system;
  const systemBlocks = typeof system === 'string' ? [{ type: 'text', text: system }] : Array.isArray(system) ? system : [];
  for (const block of systemBlocks) parts.push(part('system', block));
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  messages.forEach((message, m) => {
    const content = message?.content;
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
    for (const block of blocks) parts.push(part(`message ${m} ${JSON.stringify(message?.role)}`, block));
  });
  const last = parts.at(-1);
  if (last && isCacheControl(body?.cache_control)) {
    // top-level cache_control: the API puts the marker on the last cacheable block
    last.breakpoint = true;
    last.ttl = body.cache_control.ttl === '1h' ? '1h' : '5m';
  }
  return parts;
};

/** OpenAI prompt as parts: all tools as one part, then each whole message (each ends a cacheable prefix). */
export const openaiPromptParts = (body: any): PromptPart[] => {
  const parts: PromptPart[] = [];
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  if (tools.length > 0) parts.push({ ...factsOf('tools', tools), breakpoint: false, ttl: '5m' });
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  messages.forEach((message, m) => {
    parts.push({ ...factsOf(`message ${m}`, message), breakpoint: false, ttl: '5m', messageEnd: true });
  });
  return parts;
};

/** Total estimated tokens of a prompt. */
export const promptTokens = (parts: PromptPart[]): number => parts.reduce((sum, p) => sum + p.tokens, 0);

/**
 * sha256 of each wanted prefix: fingerprints[i] identifies parts[0..i]. One running hash reads every part's digest once;
 * only the wanted prefixes (those a request looks up or stores) are digested from a copy of it.
 */
const prefixFingerprints = (parts: PromptPart[], wanted: (index: number) => boolean): Array<string | undefined> => {
  const running = createHash('sha256');
  return parts.map((p, index) => {
    running.update(p.digest);
    return wanted(index) ? running.copy().digest('hex') : undefined;
  });
};

/** Running token totals: cumulative[i] = tokens of parts[0..i]. */
const cumulativeTokens = (parts: PromptPart[]): number[] => {
  let sum = 0;
  return parts.map((p) => (sum += p.tokens));
};

/** Remembers cached prefixes (fingerprint -> tokens) per protocol and model, and splits each request's usage. */
export class PromptCache {
  private readonly entries = new Map<string, Map<string, number>>();

  constructor(private readonly minTokens: number) {}

  /** Forget every cached prefix. */
  clear(): void {
    this.entries.clear();
  }

  private store(namespace: string): Map<string, number> {
    let map = this.entries.get(namespace);
    if (!map) this.entries.set(namespace, (map = new Map()));
    return map;
  }

  /** Account one Anthropic request: read the longest cached prefix near a breakpoint, write up to the last breakpoint. */
  anthropic(model: string, parts: PromptPart[]): AnthropicCacheUsage {
    // the assistant turn's opening follows the last block, so it is never cached: input_tokens is never 0, as on the real API
    const total = promptTokens(parts) + GENERATION_PROMPT_TOKENS;
    const breakpoints = parts.flatMap((p, i) => (p.breakpoint ? [i] : []));
    if (breakpoints.length === 0) return { total, input: total, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 };
    const store = this.store(`anthropic:${model}`);
    // a breakpoint and the blocks the lookback checks before it
    const fingerprints = prefixFingerprints(parts, (index) => breakpoints.some((b) => index <= b && index >= b - LOOKBACK_BLOCKS));
    const cumulative = cumulativeTokens(parts);
    let cacheRead = 0;
    for (const b of breakpoints) {
      for (let j = b; j >= Math.max(0, b - LOOKBACK_BLOCKS); j--) {
        if (store.has(fingerprints[j]!)) {
          cacheRead = Math.max(cacheRead, cumulative[j]);
          break;
        }
      }
    }
    const last = breakpoints[breakpoints.length - 1];
    const longest = cumulative[last];
    const cacheWrite = longest >= this.minTokens && longest > cacheRead ? longest - cacheRead : 0;
    for (const b of breakpoints) if (cumulative[b] >= this.minTokens) store.set(fingerprints[b]!, cumulative[b]);
    const cacheWrite1h = parts[last].ttl === '1h' ? cacheWrite : 0;
    return { total, input: total - cacheRead - cacheWrite, cacheRead, cacheWrite, cacheWrite1h };
  }

  /** Account one OpenAI request: cached = longest whole-message prefix seen before; then remember every such prefix. */
  openai(model: string, parts: PromptPart[]): OpenAICacheUsage {
    const prompt = promptTokens(parts);
    const store = this.store(`openai:${model}`);
    const fingerprints = prefixFingerprints(parts, (index) => parts[index].messageEnd === true);
    const cumulative = cumulativeTokens(parts);
    let cached = 0;
    parts.forEach((p, i) => {
      if (!p.messageEnd) return;
      if (store.has(fingerprints[i]!)) cached = Math.max(cached, cumulative[i]);
    });
    parts.forEach((p, i) => {
      if (p.messageEnd && cumulative[i] >= this.minTokens) store.set(fingerprints[i]!, cumulative[i]);
    });
    return { prompt, cached };
  }
}

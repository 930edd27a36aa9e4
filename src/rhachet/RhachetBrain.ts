import type { BhrainContext } from '../agent/BhrainContext.js';

// rhachet v1.45.2's brain contract (src/domain.objects/Brain*.ts), as bhrain meets it without depending on rhachet

/**
 * .what = a price in rhachet's IsoPrice words form: `<currency> <amount>`, the amount in plain decimal digits
 * .example = 'USD 0.000003' (3 USD per million tokens, per token)
 */
export type IsoPrice = string;

/** .what = a duration as rhachet's IsoDuration object: its unit in the key, e.g. { milliseconds: 500 } or { seconds: 1 } */
export type IsoDuration = { milliseconds?: number; seconds?: number; minutes?: number; hours?: number };

/**
 * .what = what a brain supplier publishes and guarantees, in rhachet's BrainSpec shape (rhachet v1.45.2)
 * .why = rhachet callers compare brains by cost (time, cash per token) and gain (window, grades, cutoff) before a call
 */
export interface RhachetBrainSpec {
  cost: {
    time: {
      /** output tokens generated per unit of time */
      speed: { tokens: number; per: IsoDuration };
      /** time to the first token */
      latency: IsoDuration;
    };
    /** per-token rates (already divided by a million) */
    cash: { per: 'token'; input: IsoPrice; output: IsoPrice; cache: { get: IsoPrice; set: IsoPrice } };
  };
  gain: {
    size: { context: { tokens: number } };
    /** benchmark scores, 0 to 100; {} when none is claimed */
    grades: Record<string, number | undefined>;
    /** knowledge cutoff, an ISO date */
    cutoff: string;
    domain: 'ALL' | 'SOFTWARE';
    skills: { tooluse?: boolean; vision?: boolean };
  };
}

/**
 * .what = a zod schema as the rhachet adapters use it: by its own methods, so a schema from another copy of zod works
 * .note = zod 4.1 or newer (toJSONSchema); rhachet passes the caller's zod, which need not be ours
 */
export interface RhachetSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown };
  toJSONSchema(): object;
}

/** .what = a brief as rhachet passes it (an Artifact<GitFile>): its content, or null when the file is gone */
export interface RhachetBrief {
  get(): Promise<{ content: string } | null>;
}

/** .what = a tool call the model asked for, in rhachet's BrainPlugToolInvocation shape; slug is the tool's own */
export interface RhachetPlugToolInvocation<TInput = unknown> {
  exid: string;
  slug: string;
  input: TInput;
}

/**
 * .what = a tool's result, fed back to a brain, in rhachet's BrainPlugToolExecution shape
 * .note = on an error signal, output is { error } (an Error, or its { name, message } once serialized)
 */
export type RhachetPlugToolExecution<TInput = unknown, TOutput = unknown> = {
  exid: string;
  slug: string;
  input: TInput;
  metrics: { cost: { time: IsoDuration } };
} & (
  | { signal: 'success'; output: TOutput }
  | { signal: 'error:constraint' | 'error:malfunction'; output: { error: { name?: string; message?: string } } }
);

/**
 * .what = a tool plugged into a brain, in rhachet's BrainPlugToolDefinition shape
 * .note = slug may hold dots (`stripe.customer.lookup`); a repl needs execute, an atom returns the calls instead
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rhachet's own defaults: a caller's typed tools fit without casts
export interface RhachetPlugToolDefinition<TInput = any, TOutput = any> {
  slug: string;
  name: string;
  description: string;
  schema: { input: RhachetSchema<TInput>; output: RhachetSchema<TOutput> };
  execute?: (
    input: { invocation: RhachetPlugToolInvocation<TInput> },
    context: unknown,
  ) => Promise<RhachetPlugToolExecution<TInput, TOutput>>;
}

/** .what = what a caller plugs into a rhachet-shaped call: its tools */
export interface RhachetBrainPlugs {
  tools?: RhachetPlugToolDefinition[];
}

/**
 * .what = an exchange as rhachet hashes it: hash = sha256 hex of input + "\n" + output (exid left out)
 * .note = an exchange with tool calls or tool results holds them as a JSON array of Anthropic content blocks, as
 *         rhachet-brains-anthropic writes them
 */
export interface RhachetBrainExchange {
  readonly hash: string;
  readonly input: string;
  readonly output: string;
  readonly exid: string | null;
}

/** .what = an episode as rhachet hashes it: hash = sha256 hex of its exchanges' hashes joined by "\n" */
export interface RhachetBrainEpisode {
  readonly hash: string;
  readonly exid: string | null;
  readonly exchanges: readonly RhachetBrainExchange[];
}

/**
 * .what = a series as rhachet hashes it: hash = sha256 hex of its episodes' hashes joined by "\n"
 * .note = no summaries: the recap that bridges two episodes is the first exchange of the later one
 */
export interface RhachetBrainSeries {
  readonly hash: string;
  readonly exid: string | null;
  readonly episodes: readonly RhachetBrainEpisode[];
}

/** .what = token and char counts of one call, by part */
export interface RhachetBrainSizes {
  input: number;
  output: number;
  cache: { get: number; set: number };
}

/** .what = size and cost of one call in rhachet's BrainOutputMetrics shape: every cash value an IsoPrice, never null */
export interface RhachetBrainOutputMetrics {
  size: { tokens: RhachetBrainSizes; chars: RhachetBrainSizes };
  cost: {
    time: IsoDuration;
    cash: { total: IsoPrice; deets: { input: IsoPrice; output: IsoPrice; cache: { get: IsoPrice; set: IsoPrice } } };
  };
}

/**
 * .what = the result of a rhachet-shaped ask or act: the output, the tool calls an atom asks for, metrics, and the NEW
 *         refs in rhachet's hash rule
 * .note = an atom returns output null with calls when the model called tools, and series null; a repl runs its tools
 *         itself (calls null) and always returns a new episode and series
 */
export interface RhachetBrainOutput<TOutput, TSeries extends RhachetBrainSeries | null = RhachetBrainSeries | null> {
  output: TOutput;
  calls: { tools: RhachetPlugToolInvocation[] } | null;
  metrics: RhachetBrainOutputMetrics;
  episode: RhachetBrainEpisode;
  series: TSeries;
}

/**
 * .what = the credentials rhachet binds for a supplier: an async getter of keys, or a keyrack reference (refused by
 *         bhrain, which has no keyrack), or null for a supplier that needs none
 */
export type RhachetSuppliesCreds = (() => Promise<Record<string, string | undefined>>) | { keyrack: { owner: string; env: string } } | null;

/**
 * .what = the context a rhachet-shaped call takes: rhachet's `brain.supplier.bhrain` supplies, beside bhrain's own
 *         context fields (log, env, creds, timeoutMs, signal, cwd, ...)
 * .note = creds keys read: each supplier's token, key and URL variables, as src/core/contract/supplierTable.ts lists
 *         them; other keys rhachet's context carries (other suppliers') are ignored at run time
 */
export type RhachetBrainContext = BhrainContext & { 'brain.supplier.bhrain'?: { creds: RhachetSuppliesCreds } };

/** .what = rhachet's input of BrainAtom.ask: a prompt, or the executions of the tools the last answer called */
export interface RhachetBrainAtomAsk<TOutput> {
  on?: { episode: RhachetBrainEpisode };
  plugs?: RhachetBrainPlugs;
  role: { briefs?: RhachetBrief[] };
  prompt: string | RhachetPlugToolExecution[];
  schema: { output: RhachetSchema<TOutput> };
}

/** .what = rhachet's input of BrainRepl.ask and .act: on is exactly one of episode or series */
export interface RhachetBrainReplCall<TOutput> {
  on?: { episode: RhachetBrainEpisode; series?: never } | { series: RhachetBrainSeries; episode?: never };
  plugs?: RhachetBrainPlugs;
  role: { briefs?: RhachetBrief[] };
  prompt: string;
  schema: { output: RhachetSchema<TOutput> };
}

/**
 * .what = a bhrain atom in rhachet's BrainAtom shape: ask and no act (rhachet tells atoms from repls so)
 * .note = output is null when the model called plugged tools (then calls lists them); series is always null
 */
export interface RhachetBrainAtom {
  readonly repo: 'bhrain';
  /** repo-prefixed, e.g. bhrain/claude/sonnet */
  readonly slug: string;
  readonly description: string;
  readonly spec: RhachetBrainSpec;
  ask<TOutput>(input: RhachetBrainAtomAsk<TOutput>, context?: RhachetBrainContext): Promise<RhachetBrainOutput<TOutput | null, null>>;
}

/** .what = a bhrain repl in rhachet's BrainRepl shape: ask (read-only) and act (full tools), tools run inside */
export interface RhachetBrainRepl {
  readonly repo: 'bhrain';
  /** repo-prefixed, e.g. bhrain/bhrain.struct.v1@claude/sonnet */
  readonly slug: string;
  readonly description: string;
  readonly spec: RhachetBrainSpec;
  ask<TOutput>(
    input: RhachetBrainReplCall<TOutput>,
    context?: RhachetBrainContext,
  ): Promise<RhachetBrainOutput<TOutput, RhachetBrainSeries>>;
  act<TOutput>(
    input: RhachetBrainReplCall<TOutput>,
    context?: RhachetBrainContext,
  ): Promise<RhachetBrainOutput<TOutput, RhachetBrainSeries>>;
}

import { BadRequestError } from '../../core/contract/errors.js';

// a brain atom of a rhachet supplier (rhachet-brains-anthropic, -openai, -xai, ...), as bhrain calls it: rhachet v1.45.2's
// BrainAtom contract (src/domain.objects/BrainAtom.ts, BrainPlug*.ts, BrainOutput*.ts), met without depending on rhachet

/** .what = a tool offered to a supplier's atom: its slug (the name the model calls), a description, and zod schemas */
export interface RhachetSupplierTool {
  slug: string;
  name: string;
  description: string;
  schema: { input: unknown; output: unknown };
}

/** .what = a tool's result sent back to a supplier's atom (BrainPlugToolExecution); an error output is { error: Error } */
export interface RhachetSupplierExecution {
  exid: string;
  slug: string;
  input: unknown;
  signal: 'success' | 'error:constraint' | 'error:malfunction';
  output: unknown;
  metrics: { cost: { time: { milliseconds: number } } };
}

/** .what = an episode as a supplier returns it; bhrain keeps it opaque and sends it back to the same atom */
export interface RhachetSupplierEpisode {
  hash: string;
  exid: string | null;
  exchanges: ReadonlyArray<{ hash: string; input: string; output: string; exid: string | null }>;
}

/** .what = one part of a size or a cost, by kind (rhachet's BrainOutputMetrics); cash values are IsoPrice strings */
interface RhachetSupplierParts<T> {
  input: T;
  output: T;
  cache: { get: T; set: T };
}

/** .what = what a supplier's ask returns (BrainOutput of grain 'atom'): output, the tool calls asked for, metrics, episode */
export interface RhachetSupplierOutput {
  output: unknown;
  calls: { tools: ReadonlyArray<{ exid: string; slug: string; input: unknown }> } | null;
  metrics?: {
    size?: { tokens?: Partial<RhachetSupplierParts<number>> };
    cost?: { time?: unknown; cash?: { total?: unknown; deets?: Partial<RhachetSupplierParts<unknown>> } };
  };
  episode: RhachetSupplierEpisode;
  series?: unknown;
}

/** .what = the input of a supplier atom's ask */
export interface RhachetSupplierAsk {
  on?: { episode: RhachetSupplierEpisode };
  plugs?: { tools?: RhachetSupplierTool[] };
  role: { briefs?: Array<{ get(): Promise<{ content: string } | null> }> };
  prompt: string | RhachetSupplierExecution[];
  schema: { output: unknown };
}

/**
 * .what = a brain atom of a rhachet supplier: repo, slug (repo-prefixed, or not for a legacy one), description, spec,
 *         and ask; no act (rhachet tells an atom from a repl so)
 * .note = the spec is read for price (cost.cash, IsoPrice per token), window (gain.size.context.tokens) and tool use
 *         (gain.skills.tooluse); anything else in it is shown, never relied on
 */
export interface RhachetSupplierAtom {
  readonly repo: string;
  readonly slug: string;
  readonly description?: string;
  readonly spec?: {
    cost?: { cash?: { input?: unknown; output?: unknown; cache?: { get?: unknown; set?: unknown } } };
    gain?: { size?: { context?: { tokens?: number } }; skills?: { tooluse?: boolean } };
  };
  ask(input: RhachetSupplierAsk, context?: Record<string, unknown>): Promise<RhachetSupplierOutput>;
}

/** .what = a brain's full slug, as rhachet's getBrainSlugFull makes it: the repo prefix added when the slug lacks it */
export const getRhachetSlugFull = (brain: { repo: string; slug: string }): string =>
  brain.slug.startsWith(`${brain.repo}/`) ? brain.slug : `${brain.repo}/${brain.slug}`;

/** .what = whether a value has the shape of a rhachet brain atom: a repo, a slug and ask, and no act (a repl has act) */
export const isRhachetSupplierAtom = (value: unknown): value is RhachetSupplierAtom => {
  const given = value as Record<string, unknown> | null;
  return (
    !!given &&
    typeof given === 'object' &&
    typeof given.repo === 'string' &&
    typeof given.slug === 'string' &&
    typeof given.ask === 'function' &&
    typeof given.act !== 'function' &&
    typeof given.generate !== 'function'
  );
};

/**
 * .what = a BadRequestError that says why a value is neither one of bhrain's atoms nor a rhachet brain atom
 * .why = an atom handed to genBhrain, genBrainRepl or genRhachetBrainRepl fails before any request, saying what it lacks
 */
export const refuseNotAnAtom = (value: unknown): BadRequestError => {
  const given = value as Record<string, unknown> | null;
  const lacks =
    !given || typeof given !== 'object'
      ? [`an object, got ${given === null ? 'null' : typeof given}`]
      : typeof given.act === 'function'
        ? ['no act: it has act, so it is a rhachet BrainRepl, which runs its own loop; pass one of its supplier atoms']
        : [
            ...(typeof given.repo === 'string' ? [] : ['repo (a string)']),
            ...(typeof given.slug === 'string' ? [] : ['slug (a string)']),
            ...(typeof given.ask === 'function' ? [] : ['ask (a function)']),
          ];
  return new BadRequestError(
    `atom is neither a bhrain atom ({ slug, spec, generate, ask }) nor a rhachet brain atom ({ repo, slug, spec, ask }, no act): it needs ${lacks.join(', ')}`,
  );
};

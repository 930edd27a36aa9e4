import type { BrainAtom, BrainThinking } from '../core/contract/BrainAtom.js';
import { BadRequestError } from '../core/contract/errors.js';
import { didYouMean } from '../core/text/findNearestName.js';
import { SUPPLIER_TABLE, type SupplierSlugPrefix } from '../core/contract/supplierTable.js';
import { genClaudeAtom } from './anthropic/genClaudeAtom.js';
import {
  CLAUDE_DEFAULT,
  CLAUDE_MODELS,
  CLAUDE_UNKNOWN_MODEL,
  OPENAI_DEFAULT,
  OPENAI_MODELS,
  OPENAI_UNKNOWN_MODEL,
  QWEN_DEFAULT,
  QWEN_MODELS,
  QWEN_UNKNOWN_MODEL,
  type BrainModelEntry,
} from './models.js';
import { genOpenaiAtom } from './openai/genOpenaiAtom.js';
import { genQwenAtom } from './qwen/genQwenAtom.js';

/** .what = each slug prefix's model table; a supplier row without one is a type error here */
const MODELS_BY_PREFIX: Record<SupplierSlugPrefix, Record<string, BrainModelEntry>> = {
  claude: CLAUDE_MODELS,
  qwen: QWEN_MODELS,
  openai: OPENAI_MODELS,
};

/** .what = the slug prefixes, in the supplier table's order */
const SLUG_PREFIXES: readonly SupplierSlugPrefix[] = SUPPLIER_TABLE.map((row) => row.slugPrefix);

/** .what = the slugs of one slug prefix's models in the table */
const modelSlugsOf = (prefix: SupplierSlugPrefix): string[] => Object.keys(MODELS_BY_PREFIX[prefix]).map((name) => `${prefix}/${name}`);

/**
 * .what = every atom slug bhrain offers by name; `claude/claude-<id>` takes any Anthropic model id, `qwen/<model>`
 *         any model a qwen server serves, `openai/<model>` any OpenAI model id
 */
export const BRAIN_ATOM_SLUGS: readonly string[] = SLUG_PREFIXES.flatMap((prefix) => [
  prefix,
  ...modelSlugsOf(prefix),
  prefix === 'claude' ? 'claude/claude-<id>' : `${prefix}/<model>`,
]);

/** .what = the slugs of the models in bhrain's table, one per model: claude/sonnet, qwen/qwen-plus, openai/…; what rhachet is offered */
export const MODEL_ATOM_SLUGS: readonly string[] = SLUG_PREFIXES.flatMap(modelSlugsOf);

/** .what = a model resolved from the table (priced, with its slug name) or an id outside it (price null) */
type Resolved = { name: string; entry: BrainModelEntry; known: boolean };

/** .what = a claude model by short name (sonnet) or raw id (claude-sonnet-4-6); unknown ids get a default window */
const resolveClaude = (id: string): Resolved => {
  const byName = CLAUDE_MODELS[id as keyof typeof CLAUDE_MODELS];
  if (byName) return { name: id, entry: byName, known: true };
  const byId = Object.entries(CLAUDE_MODELS).find(([, entry]) => entry.model === id);
  if (byId) return { name: byId[0], entry: byId[1], known: true };
  return { name: id, entry: { supplier: 'anthropic', model: id, price: null, ...CLAUDE_UNKNOWN_MODEL }, known: false };
};

/** .what = a qwen model by id; one outside the table (a self-hosted server's) gets a default window */
const resolveQwen = (id: string): Resolved => {
  const entry = QWEN_MODELS[id];
  if (entry) return { name: id, entry, known: true };
  return { name: id, entry: { supplier: 'qwen', model: id, price: null, ...QWEN_UNKNOWN_MODEL }, known: false };
};

/** .what = an openai model by id; one outside the table (a newer or dated id) gets a default window, price null */
const resolveOpenai = (id: string): Resolved => {
  const entry = OPENAI_MODELS[id];
  if (entry) return { name: id, entry, known: true };
  return { name: id, entry: { supplier: 'openai', model: id, price: null, ...OPENAI_UNKNOWN_MODEL }, known: false };
};

/** .what = what an atom over a model outside the table says about itself */
const describeUnknown = (entry: BrainModelEntry): string =>
  `, a model outside bhrain's table: price unknown (cost null), window assumed ${entry.contextWindowTokens} tokens`;

/**
 * .what = the atom behind a slug (claude, claude/haiku|sonnet|opus, claude/claude-<id>, qwen, qwen/<model>, openai,
 *         openai/<model>), with an
 *         optional raw supplier model id that overrides the slug's model and an optional supplier endpoint
 * .why = one way to name a model everywhere (library, CLI, repl slugs); an unknown slug is an error listing the
 *        choices; any model id works, known ids keep their price and window, others are priced null (spec.price)
 * .note = baseUrl beats context.creds.<supplier>.url and the supplier table's URL variable; for claude give it with or
 *         without /v1, for qwen with /v1 (an OpenAI-compatible server's base URL); thinking is the default of every
 *         generate() (claude: extended thinking, budget at least 1024; qwen: DashScope's enable_thinking)
 */
export const genBrainAtom = (input: { slug: string; model?: string; baseUrl?: string; thinking?: BrainThinking }): BrainAtom => {
  if (input.model !== undefined && !/^\S+$/.test(input.model))
    throw new BadRequestError(
      `--model '${input.model}' is not a model id: give the supplier's id without spaces, e.g. claude-sonnet-4-6 or qwen3-coder-plus (genBrainAtom's model)`,
    );
  const [supplier, ...rest] = input.slug.split('/');
  const named = rest.length ? rest.join('/') : null;
  if (supplier === 'claude' && named !== '') {
    // a slug names a short name or an Anthropic id (they all begin with claude-); a typo like claude/sonnett fails here
    const slugModel = named === null ? CLAUDE_DEFAULT : named;
    const fromSlug = resolveClaude(slugModel);
    if (fromSlug.known || (slugModel.startsWith('claude-') && !slugModel.includes('/'))) {
      const { name, entry, known } = input.model === undefined ? fromSlug : resolveClaude(input.model);
      return genClaudeAtom({
        slug: `claude/${name}`,
        entry,
        baseUrl: input.baseUrl,
        thinking: input.thinking,
        description: `Anthropic ${entry.model} via the Messages API${known ? '' : describeUnknown(entry)}`,
      });
    }
  }
  if (supplier === 'qwen' && named !== '') {
    const { name, entry, known } = resolveQwen(input.model ?? named ?? QWEN_DEFAULT);
    return genQwenAtom({
      slug: `qwen/${name}`,
      entry,
      baseUrl: input.baseUrl,
      thinking: input.thinking,
      description: `Qwen ${entry.model} via an OpenAI-compatible Chat Completions endpoint${known ? '' : describeUnknown(entry)}`,
    });
  }
  if (supplier === 'openai' && named !== '') {
    const { name, entry, known } = resolveOpenai(input.model ?? named ?? OPENAI_DEFAULT);
    return genOpenaiAtom({
      slug: `openai/${name}`,
      entry,
      baseUrl: input.baseUrl,
      thinking: input.thinking,
      description: `OpenAI ${entry.model} via the Chat Completions API${known ? '' : describeUnknown(entry)}`,
    });
  }
  // a typo gets the one atom it is nearest, not the whole list
  const slugs = BRAIN_ATOM_SLUGS.filter((slug) => !slug.includes('<'));
  const byModel = slugs.find((slug) => slug.endsWith(`/${input.slug}`));
  const near = byModel ? `did you mean '${byModel}'? ` : didYouMean(input.slug, slugs);
  throw new BadRequestError(
    near
      ? `unknown atom '${input.slug}': ${near}(an atom is ${SLUG_PREFIXES.join(', ')}, or one of them with a model: claude/sonnet, qwen/<model>, openai/<model>)`
      : `unknown atom '${input.slug}': choose one of ${BRAIN_ATOM_SLUGS.join(', ')}. For any other model id, pass the supplier's atom and --model <id> (genBrainAtom's model)`,
  );
};

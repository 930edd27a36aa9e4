import { CLAUDE_MODELS, OPENAI_MODELS, QWEN_MODELS } from '../providers/models.js';
import { genRhachetBrainAtom } from './genRhachetBrainAtom.js';
import { genRhachetBrainRepl } from './genRhachetBrainRepl.js';
import type { RhachetBrainAtom, RhachetBrainRepl } from './RhachetBrain.js';

/** .what = the atom slugs bhrain offers rhachet: claude/haiku|sonnet|opus and every qwen and openai model of the table */
const listAtomSlugs = (): string[] => [
  ...Object.keys(CLAUDE_MODELS).map((name) => `claude/${name}`),
  ...Object.keys(QWEN_MODELS).map((name) => `qwen/${name}`),
  ...Object.keys(OPENAI_MODELS).map((name) => `openai/${name}`),
];

/**
 * .what = every bhrain atom in rhachet's BrainAtom shape, slugs `bhrain/claude/sonnet`, `bhrain/qwen/qwen-plus`, ...
 * .why = rhachet discovers a package's brains by this export-name prefix (getBrainAtomsBy…); pass them to
 *        genContextBrain({ brains: { atoms } }) too
 */
export const getBrainAtomsByBhrain = (): RhachetBrainAtom[] => listAtomSlugs().map((slug) => genRhachetBrainAtom({ atom: slug }));

/**
 * .what = the bhrain.struct.v1 repl over every bhrain atom in rhachet's BrainRepl shape, slugs
 *         `bhrain/bhrain.struct.v1@claude/sonnet`, ...
 * .why = rhachet discovers a package's repls by this export-name prefix (getBrainReplsBy…); each is built on its first call
 */
export const getBrainReplsByBhrain = (): RhachetBrainRepl[] => listAtomSlugs().map((slug) => genRhachetBrainRepl({ atom: slug }));

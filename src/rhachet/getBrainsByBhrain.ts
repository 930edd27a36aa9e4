import { MODEL_ATOM_SLUGS } from '../providers/genBrainAtom.js';
import { genRhachetBrainAtom } from './genRhachetBrainAtom.js';
import { genRhachetBrainRepl } from './genRhachetBrainRepl.js';
import type { RhachetBrainAtom, RhachetBrainRepl } from './RhachetBrain.js';

/**
 * .what = every bhrain atom in rhachet's BrainAtom shape, slugs `bhrain/claude/sonnet`, `bhrain/qwen/qwen-plus`, ...
 * .why = rhachet discovers a package's brains by this export-name prefix (getBrainAtomsBy…); pass them to
 *        genContextBrain({ brains: { atoms } }) too
 */
export const getBrainAtomsByBhrain = (): RhachetBrainAtom[] => MODEL_ATOM_SLUGS.map((slug) => genRhachetBrainAtom({ atom: slug }));

/**
 * .what = the bhrain.struct.v1 repl over every bhrain atom in rhachet's BrainRepl shape, slugs
 *         `bhrain/bhrain.struct.v1@claude/sonnet`, ...
 * .why = rhachet discovers a package's repls by this export-name prefix (getBrainReplsBy…); each is built on its first call
 */
export const getBrainReplsByBhrain = (): RhachetBrainRepl[] => MODEL_ATOM_SLUGS.map((slug) => genRhachetBrainRepl({ atom: slug }));

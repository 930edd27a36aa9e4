import type { BrainAtom } from '../core/contract/BrainAtom.js';
import { isRhachetSupplierAtom, refuseNotAnAtom, type RhachetSupplierAtom } from '../rhachet/contract/RhachetSupplierAtom.js';
import { genBrainAtomOfRhachet } from './rhachet/genBrainAtomOfRhachet.js';

/** .what = one of bhrain's atoms: generate and ask, a slug and a spec */
const isBrainAtom = (value: unknown): value is BrainAtom => {
  const given = value as Partial<BrainAtom> | null;
  return !!given && typeof given === 'object' && typeof given.generate === 'function' && typeof given.slug === 'string' && !!given.spec;
};

/**
 * .what = an atom as bhrain runs it: one of ours as it is, a rhachet brain atom (told by its shape: repo, slug, ask, no
 *         act) through genBrainAtomOfRhachet; anything else is a BadRequestError saying what it lacks
 * .why = genBhrain, genBrainRepl and genRhachetBrainRepl take either kind, so every rhachet supplier runs the loop
 */
export const asBrainAtom = (atom: BrainAtom | RhachetSupplierAtom | unknown): BrainAtom => {
  if (isBrainAtom(atom)) return atom;
  if (isRhachetSupplierAtom(atom)) return genBrainAtomOfRhachet({ atom });
  throw refuseNotAnAtom(atom);
};

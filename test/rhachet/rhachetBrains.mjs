// `rhachet/brains` as the readme's examples use it: genContextBrain in explicit mode, as rhachet v1.45.2 does it, written
// from its source as facts (ehmpathy/rhachet@60ae13c: src/domain.operations/context/genContextBrain.ts,
// genContextBrainSupplier.ts, brains/getBrainSlugFull.ts, brain/asBrain{Atom,Repl}WithContextBound.ts,
// domain.objects/ContextBrain.ts). rhachet is not in the npm registry; test/readme/readme.test.ts links this file as
// node_modules/rhachet/brains.mjs beside the examples

/** a brain's slug with its repo's prefix, which every choice names */
const getBrainSlugFull = (brain) => (brain.slug.startsWith(`${brain.repo}/`) ? brain.slug : `${brain.repo}/${brain.slug}`);
const isBrainRepl = (brain) => 'ask' in brain && 'act' in brain;

/** the brain with `brain.supplier.<repo>: { creds }` bound under the caller's own context (the caller's keys win) */
const withContextBound = (brain, creds) => {
  const bound = creds ? { [`brain.supplier.${brain.repo}`]: { creds } } : {};
  const wrap = (method) => (input, context) => method.call(brain, input, { ...bound, ...context });
  return isBrainRepl(brain) ? { ...brain, ask: wrap(brain.ask), act: wrap(brain.act) } : { ...brain, ask: wrap(brain.ask) };
};

export const genContextBrain = (input) => {
  const atoms = input.brains?.atoms ?? [];
  const repls = input.brains?.repls ?? [];
  for (const [kind, brains] of [
    ['atom', atoms],
    ['repl', repls],
  ]) {
    const keys = brains.map((brain) => `${brain.repo}:${brain.slug}`);
    const duplicate = keys.find((key, index) => keys.indexOf(key) !== index);
    if (duplicate) throw new Error(`duplicate ${kind} identifier: ${duplicate}`);
  }
  const pick = (brains, slug, kind) => {
    const found = brains.filter((brain) => getBrainSlugFull(brain) === slug);
    if (!found.length) throw new Error(`${kind} not found: ${slug}; available: ${brains.map(getBrainSlugFull).join(', ')}`);
    if (found.length > 1) throw new Error(`ambiguous brain slug: ${slug}`);
    return found[0];
  };
  const choice = !input.choice
    ? null
    : typeof input.choice === 'object' && 'repl' in input.choice
      ? pick(repls, input.choice.repl, 'repl brain')
      : typeof input.choice === 'object' && 'atom' in input.choice
        ? pick(atoms, input.choice.atom, 'atom brain')
        : pick([...atoms, ...repls], input.choice, 'brain');
  const byRef = (brains, ref) => {
    const found = brains.find((brain) => brain.repo === ref.repo && brain.slug === ref.slug);
    if (!found) throw new Error(`brain not found: ${ref.repo}/${ref.slug}`);
    return withContextBound(found, input.creds);
  };
  return {
    brain: {
      atom: { ask: ({ brain, ...call }) => byRef(atoms, brain).ask(call) },
      repl: { ask: ({ brain, ...call }) => byRef(repls, brain).ask(call), act: ({ brain, ...call }) => byRef(repls, brain).act(call) },
      choice: choice && withContextBound(choice, input.creds),
    },
  };
};

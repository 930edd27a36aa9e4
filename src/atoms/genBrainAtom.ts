import type { BrainAtom } from '../contract/BrainAtom.js';
import { BadRequestError } from '../contract/errors.js';
import { genClaudeAtom } from './claude/genClaudeAtom.js';
import { CLAUDE_DEFAULT, CLAUDE_MODELS, QWEN_DEFAULT, QWEN_MODELS, QWEN_UNKNOWN_MODEL } from './models.js';
import { genQwenAtom } from './qwen/genQwenAtom.js';

/** .what = every atom slug bhrain offers by name; `qwen/<model>` also takes any model a qwen server serves */
export const BRAIN_ATOM_SLUGS: readonly string[] = [
  'claude',
  ...Object.keys(CLAUDE_MODELS).map((name) => `claude/${name}`),
  'qwen',
  ...Object.keys(QWEN_MODELS).map((name) => `qwen/${name}`),
  'qwen/<model>',
];

/**
 * .what = the atom behind a slug: claude, claude/haiku|sonnet|opus, qwen, qwen/<model>
 * .why = one way to name a model everywhere (library, CLI, repl slugs); an unknown slug is an error listing the choices
 */
export const genBrainAtom = (input: { slug: string }): BrainAtom => {
  const [supplier, model, ...extra] = input.slug.split('/');
  if (supplier === 'claude' && !extra.length) {
    const name = (model ?? CLAUDE_DEFAULT) as keyof typeof CLAUDE_MODELS;
    const entry = CLAUDE_MODELS[name];
    if (entry) return genClaudeAtom({ slug: `claude/${name}`, entry });
  }
  if (supplier === 'qwen' && model !== '') {
    const name = [model, ...extra].filter(Boolean).join('/') || QWEN_DEFAULT;
    const entry = QWEN_MODELS[name] ?? { supplier: 'qwen', model: name, price: null, ...QWEN_UNKNOWN_MODEL };
    return genQwenAtom({ slug: `qwen/${name}`, entry });
  }
  throw new BadRequestError(
    `unknown atom '${input.slug}': choose one of ${BRAIN_ATOM_SLUGS.join(', ')}`,
  );
};

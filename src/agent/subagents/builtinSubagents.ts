import { loadToolDescription } from '../tool/loadToolDescription.js';
import { BUILTIN_SUBAGENT_SUMMARIES, type BhrainBuiltinSubagentType, type BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';

/**
 * .what = the built-in subagent types: explore and plan read only; general-purpose has the parent's tools
 * .why = the three types of docs/design/loop.md#subagents; their prompts are product surface, kept in sibling .txt files
 */
export const BUILTIN_SUBAGENTS: Readonly<Record<BhrainBuiltinSubagentType, BhrainSubagentTypeResolved>> = {
  explore: {
    name: 'explore',
    ...BUILTIN_SUBAGENT_SUMMARIES.explore,
    systemPrompt: loadToolDescription(new URL('./explore.txt', import.meta.url)),
    atom: null,
  },
  plan: {
    name: 'plan',
    ...BUILTIN_SUBAGENT_SUMMARIES.plan,
    systemPrompt: loadToolDescription(new URL('./plan.txt', import.meta.url)),
    atom: null,
  },
  'general-purpose': {
    name: 'general-purpose',
    ...BUILTIN_SUBAGENT_SUMMARIES['general-purpose'],
    systemPrompt: loadToolDescription(new URL('./general-purpose.txt', import.meta.url)),
    atom: null,
  },
};

import { loadToolDescription } from '../tool/loadToolDescription.js';
import type { BhrainBuiltinSubagentType, BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';

/**
 * .what = the built-in subagent types: explore and plan read only; general-purpose has the parent's tools
 * .why = seed 002 §2.1 names these three; their prompts are product surface, kept in sibling .txt files
 */
export const BUILTIN_SUBAGENTS: Readonly<Record<BhrainBuiltinSubagentType, BhrainSubagentTypeResolved>> = {
  explore: {
    name: 'explore',
    description: 'searches the codebase (read, glob, grep, websearch; read-only) and reports what it found, with file paths',
    systemPrompt: loadToolDescription(new URL('./explore.txt', import.meta.url)),
    tools: 'read-only',
    atom: null,
  },
  plan: {
    name: 'plan',
    description: 'studies the code (read-only) and returns a step-by-step plan for a change',
    systemPrompt: loadToolDescription(new URL('./plan.txt', import.meta.url)),
    tools: 'read-only',
    atom: null,
  },
  'general-purpose': {
    name: 'general-purpose',
    description: 'completes a task with your own tools (it may change files and run commands) and reports the result',
    systemPrompt: loadToolDescription(new URL('./general-purpose.txt', import.meta.url)),
    tools: 'parent',
    atom: null,
  },
};

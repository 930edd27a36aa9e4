import type { BrainAtom } from '../../core/contract/BrainAtom.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';

/** .what = the subagent types every session with subagents on can spawn */
export const BUILTIN_SUBAGENT_TYPES = ['explore', 'plan', 'general-purpose'] as const;
export type BhrainBuiltinSubagentType = (typeof BUILTIN_SUBAGENT_TYPES)[number];

/**
 * .what = what each built-in type is for (the model reads it in the task tool) and the tools it gets
 * .why = apart from their prompts (builtinSubagents.ts reads those from files), so `bhrain agents` lists them cheaply
 */
export const BUILTIN_SUBAGENT_SUMMARIES: Readonly<
  Record<BhrainBuiltinSubagentType, { description: string; tools: 'read-only' | 'parent' }>
> = {
  explore: {
    description: 'searches the codebase (read, glob, grep, websearch; read-only) and reports what it found, with file paths',
    tools: 'read-only',
  },
  plan: { description: 'studies the code (read-only) and returns a step-by-step plan for a change', tools: 'read-only' },
  'general-purpose': {
    description: 'completes a task with your own tools (it may change files and run commands) and reports the result',
    tools: 'parent',
  },
};

/**
 * .what = a custom subagent type, as a library user registers it (config.subagents.types)
 * .note = toolBoxes and toolNames absent = the parent's read-only tools (read, glob, grep, websearch), as explore gets;
 *         atom absent = the parent's atom; a custom type named like a built-in one replaces it (e.g. explore on a cheaper
 *         atom). loadAgentFiles makes these from agent files (.bhrain/agents/*.md, .claude/agents/*.md)
 */
export interface BhrainSubagentDefinition {
  /** what the model passes as subagent_type: 1-64 letters, digits, _ or - */
  name: string;
  /** one line the model reads in the task tool's description: when to pick this type */
  description: string;
  /** the child's system prompt, added after bhrain's own */
  systemPrompt: string;
  toolBoxes?: BhrainToolBox[];
  /**
   * some of the parent's tools, by name (read, grep, bash, mcp__github__get_issue, ...): the child gets those of them the
   * parent has when it spawns, never one the parent lacks; only read tools = a read-only child. Not with toolBoxes
   */
  toolNames?: readonly string[];
  /** true = all the parent's tools, as general-purpose has (an agent file without `tools:`). Not with toolBoxes or toolNames */
  inheritTools?: boolean;
  /** an atom, or its slug (claude/haiku, qwen/qwen-plus) */
  atom?: BrainAtom | string;
}

/** .what = subagents, as a config turns them on: true for the defaults, or a depth limit and custom types */
export interface BhrainSubagentsConfig {
  /** how deep children may nest: 1 (default) = the session's children cannot spawn their own */
  maxDepth?: number;
  types?: BhrainSubagentDefinition[];
}

/** .what = one subagent type, resolved: its tools are the parent's read-only ones, all the parent's, its own, or the parent's by name */
export interface BhrainSubagentTypeResolved {
  name: string;
  description: string;
  systemPrompt: string;
  tools: 'read-only' | 'parent' | readonly BhrainToolBox[] | { names: readonly string[] };
  /** null = the parent's atom */
  atom: BrainAtom | null;
}

/** .what = subagents with defaults applied: the depth limit and every type the task tool offers */
export interface BhrainSubagentsResolved {
  maxDepth: number;
  types: readonly BhrainSubagentTypeResolved[];
}

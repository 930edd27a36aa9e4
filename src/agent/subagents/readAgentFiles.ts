import { basename } from 'node:path';

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { FoundAgentFile } from '../instructions/findAgentFiles.js';
import { readFrontMatterFile } from '../instructions/readFrontMatterFile.js';
import { AGENT_NAME_PATTERN } from '../agent-skills/readAgentSkills.js';
import type { BhrainSubagentDefinition } from './BhrainSubagentDefinition.js';

// this module loads the YAML parser: it is imported only once an agent file exists, and it imports nothing a run loads
// anyway (the atom check comes as an argument), so the CLI's bundle keeps it in chunks of its own

/** .what = checks an atom slug, throwing when it names no atom (genBrainAtom's check) */
export type AgentAtomCheck = (slug: string) => unknown;

/**
 * .what = the tool names an agent file's `tools:` may give, lowercased, and bhrain's tool each means: Claude Code's names
 *         (Read, Grep, Glob, Bash, Edit, MultiEdit, Write, WebSearch, Task, Agent, Skill) and bhrain's own
 */
export const AGENT_FILE_TOOL_NAMES: Readonly<Record<string, string>> = {
  read: 'read',
  write: 'write',
  edit: 'edit',
  multiedit: 'edit',
  glob: 'glob',
  grep: 'grep',
  bash: 'bash',
  websearch: 'websearch',
  task: 'task',
  agent: 'task',
  skill: 'skill',
};

/** .what = Claude Code's model aliases, which mean a claude atom of that family */
const CLAUDE_CODE_MODEL_ALIASES = ['sonnet', 'opus', 'haiku'];

/** .what = one agent file read, for `bhrain agents`: its type, where it came from, what it asked for */
export interface FoundAgentType {
  definition: BhrainSubagentDefinition;
  path: string;
  scope: FoundAgentFile['scope'];
  /** the tools as mapped to bhrain's names; null = the parent's tools (no `tools:` given) */
  tools: readonly string[] | null;
  /** the model or atom the file asked for, as written; null = the parent's */
  model: string | null;
  /** the agent file of the nearer type of the same name, used instead; null when this one is used */
  shadowedBy: string | null;
}

/** .what = the subagent types of the agent files: those a session offers, every file read, and the warnings */
export interface AgentFiles {
  /** for config.subagents.types, nearest first, one per name */
  types: BhrainSubagentDefinition[];
  found: FoundAgentType[];
  warnings: string[];
}

/** .what = an agent file's `tools:` as bhrain's tool names, with a note for each it left out; a wrong shape is a problem */
const readToolNames = (given: unknown): { ok: true; names: string[] | null; notes: string[] } | { ok: false; problem: string } => {
  if (given === undefined || given === null) return { ok: true, names: null, notes: [] };
  // Claude Code writes `tools: Read, Grep, Glob`; a YAML list works too
  const items = typeof given === 'string' ? given.split(',') : Array.isArray(given) ? given : null;
  if (!items || items.some((item) => typeof item !== 'string'))
    return {
      ok: false,
      problem: 'has tools: that is neither a list of tool names nor a comma-separated string of them (tools: Read, Grep)',
    };
  const names: string[] = [];
  const notes: string[] = [];
  for (const item of (items as string[]).map((each) => each.trim()).filter(Boolean)) {
    const mapped = AGENT_FILE_TOOL_NAMES[item.toLowerCase()] ?? (item.startsWith('mcp__') ? item : null);
    if (mapped) {
      if (!names.includes(mapped)) names.push(mapped);
      continue;
    }
    notes.push(
      /\(.*\)$/.test(item)
        ? `its tool ${JSON.stringify(item)} has a pattern, which an agent file's tools: cannot narrow: it is left out (narrow it with permission rules instead)`
        : `its tool ${JSON.stringify(item)} is not one of bhrain's (${Object.keys(AGENT_FILE_TOOL_NAMES).join(', ')}, or mcp__<server>__<tool>): it is left out`,
    );
  }
  return { ok: true, names, notes };
};

/**
 * .what = the atom an agent file's `model:` (Claude Code's) or `atom:` asks for, as a slug; undefined = the parent's
 * .why = sonnet, opus and haiku mean claude's, on a claude parent only (a file written for Claude Code must not move a
 *        qwen run to another supplier); an unknown value is a note, and the child inherits the parent's atom
 */
const readAtom = (
  given: unknown,
  parent: { atom: string | undefined; checkAtom: AgentAtomCheck | undefined },
): { slug: string | undefined; note: string | null } => {
  const parentAtom = parent.atom;
  if (given === undefined || given === null || given === 'inherit') return { slug: undefined, note: null };
  if (typeof given !== 'string' || !given.trim())
    return { slug: undefined, note: `its model ${JSON.stringify(given)} is not a model name: the parent's atom is used` };
  const value = given.trim();
  if (CLAUDE_CODE_MODEL_ALIASES.includes(value.toLowerCase())) {
    if (parentAtom === undefined || parentAtom.startsWith('claude')) return { slug: `claude/${value.toLowerCase()}`, note: null };
    return { slug: undefined, note: `its model ${value} is Claude's, and this run is on ${parentAtom}: the parent's atom is used` };
  }
  // Claude Code also takes a model id: claude-sonnet-4-6
  const slug = value.startsWith('claude-') ? `claude/${value}` : value;
  try {
    parent.checkAtom?.(slug);
    return { slug, note: null };
  } catch (error) {
    return {
      slug: undefined,
      note: `its model ${JSON.stringify(value)} is unknown (${(error as Error).message.split('\n')[0]}): the parent's atom is used`,
    };
  }
};

/** .what = a subagent type from an agent file's fields and body, with notes; or the problem that makes it unusable */
const readAgentType = (
  file: { path: string; fields: Record<string, unknown>; body: string },
  parent: { atom: string | undefined; checkAtom: AgentAtomCheck | undefined },
):
  | { ok: true; definition: BhrainSubagentDefinition; tools: string[] | null; model: string | null; notes: string[] }
  | { ok: false; problem: string } => {
  const { fields, path } = file;
  const name = fields.name === undefined ? basename(path, '.md') : fields.name;
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name))
    return { ok: false, problem: `has the name ${JSON.stringify(name)}: an agent's name is 1-64 letters, digits, _ or -` };
  if (typeof fields.description !== 'string' || !fields.description.trim())
    return { ok: false, problem: 'has no description: the model reads it to choose the agent (description: ...)' };
  if (!file.body) return { ok: false, problem: "has no instructions after its front matter: the body is the agent's system prompt" };
  // a list of tools to take away cannot be honoured without knowing the parent's: refused, rather than run looser
  if (fields.disallowedTools !== undefined)
    return { ok: false, problem: 'has disallowedTools:, which bhrain does not read: list the tools it may use in tools: instead' };
  const tools = readToolNames(fields.tools);
  if (!tools.ok) return tools;
  const asked = fields.atom ?? fields.model;
  const atom = readAtom(asked, parent);
  return {
    ok: true,
    definition: {
      name,
      description: fields.description.replace(/\s+/g, ' ').trim(),
      systemPrompt: file.body,
      ...(tools.names ? { toolNames: tools.names } : { inheritTools: true as const }),
      ...(atom.slug ? { atom: atom.slug } : {}),
    },
    tools: tools.names,
    model: typeof asked === 'string' ? asked : null,
    notes: [...tools.notes, ...(atom.note ? [atom.note] : [])],
  };
};

/**
 * .what = reads the agent files found (findAgentFiles, nearest first): each is a subagent type for
 *         config.subagents.types (front matter name, description, tools, model or atom; the body is its system prompt), a
 *         nearer one hiding a farther one of its name
 * .why = a bad file (front matter, name, tools, size) is a warning naming it and the problem, and is left out; a tool name
 *        bhrain lacks or an unknown model is a warning too. `tools:` absent = the parent's tools (Claude Code's meaning);
 *        either way a child is never looser than its parent. parentAtom (the run's atom slug) decides what sonnet, opus
 *        and haiku mean; checkAtom (genBrainAtom) tells an unknown model
 */
export const readAgentFiles = async (
  files: readonly FoundAgentFile[],
  input: { parentAtom?: string; checkAtom?: AgentAtomCheck } = {},
  context: { log?: BrainLog } = {},
): Promise<AgentFiles> => {
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    context.log?.warn(message);
  };
  const found: FoundAgentType[] = [];
  const used = new Map<string, string>();
  for (const file of files) {
    const read = await readFrontMatterFile(file.path);
    const type = read.ok
      ? readAgentType({ path: file.path, fields: read.fields, body: read.body }, { atom: input.parentAtom, checkAtom: input.checkAtom })
      : read;
    if (!type.ok) {
      warn(`agent file ${file.path} ${type.problem}; it is skipped`);
      continue;
    }
    for (const note of type.notes) warn(`agent file ${file.path}: ${note}`);
    const shadowedBy = used.get(type.definition.name) ?? null;
    if (!shadowedBy) used.set(type.definition.name, file.path);
    found.push({ definition: type.definition, path: file.path, scope: file.scope, tools: type.tools, model: type.model, shadowedBy });
  }
  const types = found.filter((type) => !type.shadowedBy).map((type) => type.definition);
  context.log?.debug(
    `agent files: ${found.length ? found.map((type) => `${type.definition.name} (${type.path})`).join(', ') : 'none found'}`,
  );
  return { types, found, warnings };
};

import { genBrainAtom } from '../providers/genBrainAtom.js';
import type { BrainAtom } from '../core/contract/BrainAtom.js';
import type { BrainLog } from '../core/contract/BrainContext.js';
import { findAgentFiles } from '../agent/instructions/findAgentFiles.js';
import type { BhrainAgentSkill } from '../agent/agent-skills/BhrainAgentSkill.js';
import { describeSkillsLeftOut } from '../agent/agent-skills/loadAgentSkills.js';
import type { AgentSkills } from '../agent/agent-skills/readAgentSkills.js';
import { BUILTIN_SUBAGENT_SUMMARIES, type BhrainSubagentDefinition } from '../agent/subagents/BhrainSubagentDefinition.js';
import type { AgentFiles } from '../agent/subagents/readAgentFiles.js';

/** .what = what the listing commands read through: an environment and a log */
type ListContext = { env: Record<string, string | undefined>; log: BrainLog };

/** .what = `bhrain skills`: every Agent Skill found here, the shadowed ones too, and every warning a run would show */
export const listAgentSkills = async (input: { cwd: string }, context: ListContext): Promise<AgentSkills> => {
  const files = await findAgentFiles({ cwd: input.cwd, kind: 'skills' }, context);
  if (!files.length) return { skills: [], found: [], warnings: [] };
  const read = await (await import('../agent/agent-skills/readAgentSkills.js')).readAgentSkills(files, context);
  const leftOut = describeSkillsLeftOut(read.skills);
  return { ...read, warnings: leftOut ? [...read.warnings, leftOut] : read.warnings };
};

/** .what = `bhrain agents`: the built-in types a file does not replace, and every agent file found here, with its warnings */
export const listAgentTypes = async (input: { cwd: string }, context: ListContext) => {
  const found = await findAgentFiles({ cwd: input.cwd, kind: 'agents' }, context);
  const files: AgentFiles = found.length
    ? await (
        await import('../agent/subagents/readAgentFiles.js')
      ).readAgentFiles(found, { checkAtom: (slug) => genBrainAtom({ slug }) }, context)
    : { types: [], found: [], warnings: [] };
  const fileNames = new Set(files.types.map((type) => type.name));
  const builtins = Object.entries(BUILTIN_SUBAGENT_SUMMARIES)
    .filter(([name]) => !fileNames.has(name))
    .map(([name, summary]) => ({ name, ...summary }));
  return { ...files, builtins };
};

/**
 * .what = the Agent Skills and the subagent types from agent files of a run: found with a readdir per folder, and read
 *         (with the YAML parser, loaded only then) when any exist; every warning shown, the text redacted
 * .why = a run without any such file loads nothing new; a bad file is a warning naming it, and the run goes on. A file
 *        agent's atom of the run's supplier gets the run's base URL, as the run's own atom does
 */
export const resolveAgentFiles = async (
  input: { cwd: string; skills: boolean; agents: boolean; atom: BrainAtom; baseUrl: string | undefined },
  context: { env: Record<string, string | undefined>; log: BrainLog; redact: (text: string) => string },
): Promise<{ skills: BhrainAgentSkill[]; types: BhrainSubagentDefinition[] }> => {
  const [skillFiles, agentFiles] = await Promise.all([
    input.skills ? findAgentFiles({ cwd: input.cwd, kind: 'skills' }, context) : [],
    input.agents ? findAgentFiles({ cwd: input.cwd, kind: 'agents' }, context) : [],
  ]);
  // the readers (and the YAML parser) load only now, in chunks of their own
  const skills = skillFiles.length
    ? (await (await import('../agent/agent-skills/readAgentSkills.js')).readAgentSkills(skillFiles, context)).skills
    : [];
  const leftOut = describeSkillsLeftOut(skills);
  if (leftOut) context.log.warn(leftOut);
  const types = agentFiles.length
    ? (
        await (
          await import('../agent/subagents/readAgentFiles.js')
        ).readAgentFiles(agentFiles, { parentAtom: input.atom.slug, checkAtom: (slug) => genBrainAtom({ slug }) }, context)
      ).types
    : [];
  const supplier = (slug: string) => slug.split('/')[0];
  return {
    skills: skills.map((skill) => ({ ...skill, description: context.redact(skill.description) })),
    types: types.map((type) => ({
      ...type,
      description: context.redact(type.description),
      systemPrompt: context.redact(type.systemPrompt),
      ...(typeof type.atom === 'string'
        ? {
            atom: genBrainAtom({
              slug: type.atom,
              baseUrl: supplier(type.atom) === supplier(input.atom.slug) ? input.baseUrl : undefined,
            }),
          }
        : {}),
    })),
  };
};

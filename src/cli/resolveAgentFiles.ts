import { genBrainAtom } from '../providers/genBrainAtom.js';
import type { BrainAtom } from '../core/contract/BrainAtom.js';
import type { BrainLog } from '../core/contract/BrainContext.js';
import { findAgentFiles } from '../agent/instructions/findAgentFiles.js';
import type { BhrainSkill } from '../agent/skills/BhrainSkill.js';
import type { BhrainSubagentDefinition } from '../agent/subagents/BhrainSubagentDefinition.js';

/**
 * .what = the Agent Skills and the subagent types from agent files of a run: found with a readdir per folder, and read
 *         (with the YAML parser, loaded only then) when any exist; every warning shown, the text redacted
 * .why = a run without any such file loads nothing new; a bad file is a warning naming it, and the run goes on. A file
 *        agent's atom of the run's supplier gets the run's base URL, as the run's own atom does
 */
export const resolveAgentFiles = async (
  input: { cwd: string; skills: boolean; agents: boolean; atom: BrainAtom; baseUrl: string | undefined },
  context: { env: Record<string, string | undefined>; log: BrainLog; redact: (text: string) => string },
): Promise<{ skills: BhrainSkill[]; types: BhrainSubagentDefinition[] }> => {
  const [skillFiles, agentFiles] = await Promise.all([
    input.skills ? findAgentFiles({ cwd: input.cwd, kind: 'skills' }, context) : [],
    input.agents ? findAgentFiles({ cwd: input.cwd, kind: 'agents' }, context) : [],
  ]);
  const skills = skillFiles.length
    ? (await (await import('../agent/skills/loadAgentSkills.js')).loadAgentSkills({ cwd: input.cwd, files: skillFiles }, context)).skills
    : [];
  const types = agentFiles.length
    ? (
        await (
          await import('../agent/subagents/loadAgentFiles.js')
        ).loadAgentFiles({ cwd: input.cwd, parentAtom: input.atom.slug, files: agentFiles }, context)
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

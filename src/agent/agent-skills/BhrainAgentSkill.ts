import { SKILLS_LISTING_MAX_CHARS } from '../constants.js';

/**
 * .what = an Agent Skill (SKILL.md) as a session offers it: its name and description, listed in the system prompt, and
 *         the file the skill tool reads its instructions from when the model loads it
 * .note = loadAgentSkills finds them as the CLI does; a library user may list their own
 */
export interface BhrainAgentSkill {
  /** what the model passes to the skill tool: 1-64 letters, digits, _ or - */
  name: string;
  /** one line the model reads to decide when the skill applies */
  description: string;
  /** the SKILL.md, absolute; the files beside it are the skill's too */
  path: string;
}

/** .what = a skill's line in the listing */
export const formatSkillLine = (skill: Pick<BhrainAgentSkill, 'name' | 'description'>): string => `- ${skill.name}: ${skill.description}`;

/**
 * .what = the skills the system prompt lists, in order, until the next line would pass the budget; the rest are left out
 * .why = a fixed budget, however many skills a repository holds: the model learns of the left-out ones from a notice
 */
export const fitSkillListing = (
  skills: readonly BhrainAgentSkill[],
): { listed: readonly BhrainAgentSkill[]; leftOut: readonly BhrainAgentSkill[] } => {
  let used = 0;
  const fits = skills.findIndex((skill) => (used += formatSkillLine(skill).length + 1) > SKILLS_LISTING_MAX_CHARS);
  return fits < 0 ? { listed: skills, leftOut: [] } : { listed: skills.slice(0, fits), leftOut: skills.slice(fits) };
};

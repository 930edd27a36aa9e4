import type { BrainLog } from '../../core/contract/BrainContext.js';
import { SKILLS_LISTING_MAX_CHARS } from '../constants.js';
import { findAgentFiles } from '../instructions/findAgentFiles.js';
import { fitSkillListing } from './BhrainAgentSkill.js';
import type { AgentSkills } from './readAgentSkills.js';

/**
 * .what = the warning when skills do not all fit the system prompt's listing: how many, and which, are left out
 * .why = the model gets a notice in the prompt; the user reads this one, so they can shorten descriptions or remove skills
 */
export const describeSkillsLeftOut = (skills: AgentSkills['skills']): string | null => {
  const { leftOut } = fitSkillListing(skills);
  if (!leftOut.length) return null;
  return `${leftOut.length} of ${skills.length} Agent Skills are left out of the system prompt's list, which is capped at ${SKILLS_LISTING_MAX_CHARS} characters: ${leftOut.map((skill) => skill.name).join(', ')}. The model is told that more exist; shorten descriptions or remove skills to list them all`;
};

/**
 * .what = finds and reads the Agent Skills (SKILL.md) for a working directory, as the CLI does: `.bhrain/skills/*`,
 *         `.claude/skills/*` and `.agents/skills/*` in cwd and every parent up to the repository root, then the user's
 *         `<config dir>/skills/*`; nearest first, a nearer skill hiding a farther one of the same name
 * .why = for config.skills; every bad file, and skills past the listing's budget, are warnings (on context.log and in
 *        `warnings`), never a crash
 */
export const loadAgentSkills = async (
  input: { cwd: string },
  context: { env?: Record<string, string | undefined>; log?: BrainLog } = {},
): Promise<AgentSkills> => {
  const files = await findAgentFiles({ cwd: input.cwd, kind: 'skills' }, context);
  if (!files.length) return { skills: [], found: [], warnings: [] };
  const { readAgentSkills } = await import('./readAgentSkills.js');
  const read = await readAgentSkills(files, context);
  const leftOut = describeSkillsLeftOut(read.skills);
  if (leftOut) context.log?.warn(leftOut);
  return leftOut ? { ...read, warnings: [...read.warnings, leftOut] } : read;
};

import { basename, dirname } from 'node:path';

import { silentLog, type BrainLog } from '../../core/contract/BrainContext.js';
import { AGENT_FILE_MAX_BYTES, SKILL_DESCRIPTION_MAX_CHARS, SKILLS_LISTING_MAX_CHARS } from '../constants.js';
import { findAgentFiles, type FoundAgentFile } from '../instructions/findAgentFiles.js';
import { readFrontMatterFile } from '../instructions/readFrontMatterFile.js';
import { fitSkillListing, flattenDescription, type BhrainSkill } from './BhrainSkill.js';

/** .what = what a skill's or an agent's name may be: 1-64 letters, digits, _ or - */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** .what = one skill found, for `bhrain skills`: where it came from, and the nearer skill of the same name that hides it */
export interface FoundSkill extends BhrainSkill {
  scope: FoundAgentFile['scope'];
  /** the SKILL.md of the nearer skill of the same name, which is used instead; null when this one is used */
  shadowedBy: string | null;
}

/** .what = the Agent Skills for a working directory: those a session offers, every one found, and the warnings */
export interface AgentSkills {
  /** the skills to offer (config.skills), nearest first, one per name */
  skills: BhrainSkill[];
  /** every usable skill found, the shadowed ones too */
  found: FoundSkill[];
  /** each file skipped or changed, named with the problem */
  warnings: string[];
}

/** .what = a skill from its file's fields, or the problem that makes it unusable; a description cut to the limit is a note */
const readSkillFields = (
  fields: Record<string, unknown>,
  path: string,
): { ok: true; name: string; description: string; note: string | null } | { ok: false; problem: string } => {
  // the Agent Skills format names the skill after its directory when the front matter does not
  const name = fields.name === undefined ? basename(dirname(path)) : fields.name;
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name))
    return { ok: false, problem: `has the name ${JSON.stringify(name)}: a skill's name is 1-64 letters, digits, _ or -` };
  const given = fields.description;
  if (typeof given !== 'string' || !given.trim())
    return { ok: false, problem: 'has no description: the model reads it to know when to use the skill (description: ...)' };
  const description = flattenDescription(given);
  const note =
    description.length < given.replace(/\s+/g, ' ').trim().length
      ? `its description is cut to ${SKILL_DESCRIPTION_MAX_CHARS} characters`
      : null;
  return { ok: true, name, description, note };
};

/**
 * .what = finds and reads the Agent Skills (SKILL.md) for a working directory, as the CLI does: `.bhrain/skills/*`,
 *         `.claude/skills/*` and `.agents/skills/*` in every directory from cwd up to the repository root, then the user's
 *         `<config dir>/skills/*`; nearest first, and a nearer skill hides a farther one of the same name
 * .why = only each skill's front matter is read now (the body when the model loads it); a file with bad front matter, a
 *        missing description, a bad name or over AGENT_FILE_MAX_BYTES is a warning naming it and the problem, never a
 *        crash, and it is left out. Skills past the listing's budget are warned about too
 */
export const loadAgentSkills = async (
  input: { cwd: string; files?: readonly FoundAgentFile[] },
  context: { env?: Record<string, string | undefined>; log?: BrainLog } = {},
): Promise<AgentSkills> => {
  const log = context.log ?? silentLog;
  const files = input.files ?? (await findAgentFiles({ cwd: input.cwd, kind: 'skills' }, context));
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    log.warn(message);
  };
  const found: FoundSkill[] = [];
  const used = new Map<string, string>();
  for (const file of files) {
    const read = await readFrontMatterFile(file.path, AGENT_FILE_MAX_BYTES);
    const skill = read.ok ? readSkillFields(read.fields, file.path) : read;
    if (!skill.ok) {
      warn(`Agent Skill ${file.path} ${skill.problem}; it is skipped`);
      continue;
    }
    if (skill.note) warn(`Agent Skill ${file.path}: ${skill.note}`);
    const shadowedBy = used.get(skill.name) ?? null;
    if (!shadowedBy) used.set(skill.name, file.path);
    found.push({ name: skill.name, description: skill.description, path: file.path, scope: file.scope, shadowedBy });
  }
  const skills = found.filter((skill) => !skill.shadowedBy).map(({ name, description, path }) => ({ name, description, path }));
  const maxChars = SKILLS_LISTING_MAX_CHARS;
  const { leftOut } = fitSkillListing(skills, maxChars);
  if (leftOut.length)
    warn(
      `${leftOut.length} of ${skills.length} Agent Skills are left out of the system prompt's list, which is capped at ${maxChars} characters: ${leftOut.map((skill) => skill.name).join(', ')}. The model is told that more exist; shorten descriptions or remove skills to list them all`,
    );
  log.debug(`Agent Skills: ${skills.length ? skills.map((skill) => `${skill.name} (${skill.path})`).join(', ') : 'none found'}`);
  return { skills, found, warnings };
};

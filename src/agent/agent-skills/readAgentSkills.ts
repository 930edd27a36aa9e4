import { basename, dirname } from 'node:path';

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { FoundAgentFile } from '../instructions/findAgentFiles.js';
import { readFrontMatterFile } from '../instructions/readFrontMatterFile.js';
import type { BhrainAgentSkill } from './BhrainAgentSkill.js';

// this module loads the YAML parser: it is imported only once a SKILL.md or an agent file exists, and it imports nothing
// a run loads anyway, so the CLI's bundle keeps it, and the parser, in chunks of their own

/** .what = what a skill's or an agent's name may be: 1-64 letters, digits, _ or - */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** .what = the longest skill description listed, in characters (the Agent Skills spec's limit); a longer one is cut, with a warning */
export const SKILL_DESCRIPTION_MAX_CHARS = 1_024;

/** .what = one skill found, for `bhrain skills`: where it came from, and the nearer skill of the same name that hides it */
export interface FoundSkill extends BhrainAgentSkill {
  scope: FoundAgentFile['scope'];
  /** the SKILL.md of the nearer skill of the same name, which is used instead; null when this one is used */
  shadowedBy: string | null;
}

/** .what = the Agent Skills read from their files: those a session offers, every one found, and the warnings */
export interface AgentSkills {
  /** the skills to offer (config.skills), nearest first, one per name */
  skills: BhrainAgentSkill[];
  /** every usable skill found, the shadowed ones too */
  found: FoundSkill[];
  /** each file skipped or changed, named with the problem */
  warnings: string[];
}

/** .what = a description as listed: one line, at most SKILL_DESCRIPTION_MAX_CHARS */
const flattenDescription = (description: string): string => {
  const line = description.replace(/\s+/g, ' ').trim();
  return line.length > SKILL_DESCRIPTION_MAX_CHARS ? `${line.slice(0, SKILL_DESCRIPTION_MAX_CHARS - 1)}…` : line;
};

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
  const cut = description.length < given.replace(/\s+/g, ' ').trim().length;
  return { ok: true, name, description, note: cut ? `its description is cut to ${SKILL_DESCRIPTION_MAX_CHARS} characters` : null };
};

/**
 * .what = reads the Agent Skills of the SKILL.md files found (findAgentFiles, nearest first): each file's front matter
 *         only (the body when the model loads it); a nearer skill hides a farther one of the same name
 * .why = a file with bad front matter, a missing description, a bad name or over AGENT_FILE_MAX_BYTES is a warning naming
 *        it and the problem, never a crash, and it is left out
 */
export const readAgentSkills = async (files: readonly FoundAgentFile[], context: { log?: BrainLog } = {}): Promise<AgentSkills> => {
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    context.log?.warn(message);
  };
  const found: FoundSkill[] = [];
  const used = new Map<string, string>();
  for (const file of files) {
    const read = await readFrontMatterFile(file.path);
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
  context.log?.debug(`Agent Skills: ${skills.length ? skills.map((skill) => `${skill.name} (${skill.path})`).join(', ') : 'none found'}`);
  return { skills, found, warnings };
};

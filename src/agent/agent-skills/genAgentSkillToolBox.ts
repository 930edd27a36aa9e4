import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

import { SKILL_TOOL_NAME } from '../constants.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { toolBoxOf } from '../tool/executeTool.js';
import { loadToolDescription } from '../tool/loadToolDescription.js';
import { deferInput, makeTool } from '../tool/makeTool.js';
import type { BhrainAgentSkill } from './BhrainAgentSkill.js';

/** .what = the files beside a SKILL.md that are listed, at most */
const MAX_LISTED_FILES = 50;

/** .what = the skill tool's input: the name of a listed skill */
export const skillInput = deferInput(
  {
    type: 'object',
    properties: { name: { type: 'string', description: 'The name of the skill to load, as the system prompt lists it.' } },
    required: ['name'],
    additionalProperties: false,
  },
  async () => (await import('../toolboxes/toolInputs.js')).skillZodInput(),
);

/** .what = the files under a skill's directory but its SKILL.md, relative to it, depth-first, at most `max` (and whether there were more) */
const listSkillFiles = async (dir: string, max: number): Promise<{ files: string[]; more: boolean }> => {
  const files: string[] = [];
  let more = false;
  const visit = async (at: string, depth: number): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name.startsWith('.') || (depth === 0 && entry.name === 'SKILL.md')) continue;
      const path = join(at, entry.name);
      if (entry.isDirectory() && depth < 3) await visit(path, depth + 1);
      else if (!entry.isDirectory()) {
        if (files.length >= max) return void (more = true);
        files.push(relative(dir, path));
      }
    }
  };
  await visit(dir, 0);
  return { files, more };
};

/** .what = a value for a double-quoted attribute */
const asAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** .what = marks the toolboxes genAgentSkillToolBox makes, so a config that is resolved again replaces its skill tool, never doubles it */
const SKILL_BOXES = new WeakSet<BhrainToolBox>();

/** .what = whether a toolbox is a skill toolbox made by genAgentSkillToolBox */
export const isSkillToolBox = (box: BhrainToolBox): boolean => SKILL_BOXES.has(box);

/**
 * .what = the skill tool: the model names a listed skill and reads its instructions (the body of its SKILL.md, read
 *         from disk now) and the list of the files beside it, which it reads with the read tool on demand
 * .why = progressive loading: only names and descriptions sit in the system prompt; a skill's body enters the context
 *        only when the model chooses it. Its effect is read, so read-only sessions (ask) have it too
 */
export const genAgentSkillToolBox = (input: { skills: readonly BhrainAgentSkill[] }): BhrainToolBox => {
  const byName = new Map(input.skills.map((skill) => [skill.name, skill]));
  const tool = makeTool({
    name: SKILL_TOOL_NAME,
    description: loadToolDescription(new URL('./skill.txt', import.meta.url)),
    input: skillInput,
    effect: 'read',
    paths: ({ name }) => {
      const skill = byName.get(name);
      return skill ? [{ path: skill.path, access: 'read' }] : [];
    },
    execute: async ({ name }) => {
      const skill = byName.get(name);
      if (!skill)
        return {
          success: false,
          output: `There is no skill named ${JSON.stringify(name)}. The skills are: ${[...byName.keys()].join(', ') || 'none'}.`,
        };
      // the reader of instruction files (and the YAML parser with it) loads on the first call, never at start-up
      const { readTextFile, splitFrontMatter, AGENT_FILE_MAX_BYTES } = await import('../instructions/readFrontMatterFile.js');
      const read = await readTextFile(skill.path, AGENT_FILE_MAX_BYTES);
      if (!read.ok) return { success: false, output: `The skill ${name} could not be loaded: ${skill.path} ${read.problem}.` };
      const split = splitFrontMatter(read.text);
      if ('problem' in split) return { success: false, output: `The skill ${name} could not be loaded: ${skill.path} ${split.problem}.` };
      const dir = dirname(skill.path);
      const { files, more } = await listSkillFiles(dir, MAX_LISTED_FILES);
      const beside = files.length
        ? `The files beside it, in ${dir} (read them with the read tool when these instructions call for them):\n${files.map((file) => `- ${join(dir, file)}`).join('\n')}${more ? `\n- … more: list them with glob { pattern: "**/*", path: "${dir}" }` : ''}`
        : `It has no files beside it in ${dir}.`;
      return {
        success: true,
        output: `<skill name="${asAttribute(name)}" path="${asAttribute(skill.path)}">\n${beside}\n\n${split.body}\n</skill>\nFollow these instructions for the task.`,
      };
    },
  });
  const box = toolBoxOf({ name: 'skills', tools: [tool] });
  SKILL_BOXES.add(box);
  return box;
};

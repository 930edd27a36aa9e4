// the skill tool and the skill listing in the library, through the real loop and the stand-in
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { StandinTurn } from '#standin/types.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { genBhrain } from '../genBhrain.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import type { BhrainAgentSkill } from './BhrainAgentSkill.js';
import { systemOf, toolNamesOf } from '#standin/requestParts.js';
import { toolResults } from '#test-helpers/transcript.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

/** a skill on disk: its SKILL.md and one file beside it */
const genSkill = async (name: string, body: string): Promise<BhrainAgentSkill> => {
  const dir = join(tempDir('bhrain-skill-'), name);
  await mkdir(join(dir, 'scripts'), { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: the ${name} skill\n---\n${body}\n`);
  await writeFile(join(dir, 'scripts', 'run.sh'), 'echo hi\n');
  return { name, description: `Does ${name} things`, path: join(dir, 'SKILL.md') };
};

describe.each(PROTOCOL_SLUGS)('the skill tool on $slug', ({ slug }) => {
  it('loads a body read from disk when called (a SKILL.md grown past 64 KiB since is refused, never read into the context); an unknown name is an error listing every name', async () => {
    const pdf = await genSkill('pdf', 'PDF-BODY: fill forms with scripts/run.sh');
    const huge = await genSkill('huge', 'small for now');
    let step = 0;
    standin().respond = (): StandinTurn =>
      [
        { toolCalls: [{ name: 'skill', input: { name: 'pdf' } }] },
        { toolCalls: [{ name: 'skill', input: { name: 'huge' } }] },
        { toolCalls: [{ name: 'skill', input: { name: 'nope' } }] },
        { text: 'done' },
      ][step++] as StandinTurn;
    await writeFile(huge.path, `---\nname: huge\ndescription: d\n---\n${'HUGE-MARKER '.repeat(10_000)}`);
    const result = await genBhrain({ atom: slug, toolBoxes: [], skills: [pdf, huge] }).invoke({ prompt: 'go' }, contextFor());
    expect(result.output).toBe('done');
    const [loaded, tooBig, unknown] = toolResults(result.transcript);
    expect(loaded).toMatchObject({ toolName: 'skill', isError: false });
    expect(loaded.content).toContain('PDF-BODY: fill forms with scripts/run.sh');
    expect(loaded.content).toContain(`- ${join(pdf.path, '..', 'scripts', 'run.sh')}`);
    expect(loaded.content).not.toContain('description: the pdf skill');
    expect(tooBig.isError).toBe(true);
    expect(tooBig.content).toMatch(/The skill huge could not be loaded: .* is 117 KiB, more than the 64 KiB/);
    expect(JSON.stringify(standin().requests)).not.toContain('HUGE-MARKER');
    expect(unknown).toMatchObject({ isError: true, content: 'There is no skill named "nope". The skills are: pdf, huge.' });
    // the listing: name and description, never the body
    const [first] = standin().requests;
    expect(systemOf(first)).toContain('<skills>\n');
    expect(systemOf(first)).toContain('- pdf: Does pdf things\n- huge: Does huge things\n</skills>');
    expect(systemOf(first)).not.toContain('PDF-BODY');
    expect(toolNamesOf(first)).toEqual(['skill']);
  });

  it('a read-only subagent (explore) has the skill tool and the listing, as its parent; a file agent that names only read has neither', async () => {
    const pdf = await genSkill('pdf', 'PDF-BODY');
    const cwd = tempDir('bhrain-skill-cwd-');
    standin().respond = (request): StandinTurn => {
      const system = systemOf(request);
      if (system.includes('You are an explore subagent') || system.includes('READER-PROMPT')) return { text: 'child done' };
      return JSON.stringify(request.body.messages).split('child done').length > 2
        ? { text: 'done' }
        : {
            toolCalls: [
              { name: 'task', input: { description: 'look', prompt: 'look', subagent_type: 'explore' } },
              { name: 'task', input: { description: 'read', prompt: 'read', subagent_type: 'reader' } },
            ],
          };
    };
    const brain = genBhrain({
      atom: slug,
      skills: [pdf],
      subagents: { types: [{ name: 'reader', description: 'reads', systemPrompt: 'READER-PROMPT', toolNames: ['read'] }] },
    });
    expect((await brain.invoke({ prompt: 'go' }, contextFor({ cwd }))).output).toBe('done');
    const explore = standin().requests.find((request) => systemOf(request).includes('You are an explore subagent'))!;
    const reader = standin().requests.find((request) => systemOf(request).includes('READER-PROMPT'))!;
    expect(toolNamesOf(explore)).toEqual(['glob', 'grep', 'read', 'skill', 'websearch']);
    expect(systemOf(explore)).toContain('- pdf: Does pdf things');
    expect(toolNamesOf(reader)).toEqual(['read']);
    expect(systemOf(reader)).not.toContain('<skills>');
  });
});

describe('skills: configuration', () => {
  it('fails at configuration time on a toolbox tool named skill beside skills, a skill named twice, or a bad name', async () => {
    const pdf = await genSkill('pdf', 'B');
    const named: BhrainToolBox = {
      name: 'mine',
      definitions: [{ name: 'skill', description: 'mine', inputSchema: { type: 'object' } }],
      execute: async ({ call }) => ({ callId: call.id, success: true, output: '' }),
    };
    expect(() => genBhrain({ atom: 'claude/haiku', skills: [pdf], toolBoxes: [named] })).toThrow(BadRequestError);
    expect(() => genBhrain({ atom: 'claude/haiku', skills: [pdf], toolBoxes: [named] })).toThrow(/rename that tool, or give no skills/);
    // without skills, a tool named skill is the caller's own
    expect(() => genBhrain({ atom: 'claude/haiku', toolBoxes: [named] })).not.toThrow();
    expect(() => genBhrain({ atom: 'claude/haiku', skills: [pdf, pdf] })).toThrow(/skills names 'pdf' twice/);
    expect(() => genBhrain({ atom: 'claude/haiku', skills: [{ ...pdf, name: 'a b' }] })).toThrow(/a skill name is 1-64 letters/);
    expect(genBhrain({ atom: 'claude/haiku' }).config.skills).toEqual([]);
  });
});

// reading SKILL.md and agent files (front matter, Claude Code's names, the hostile cases), and a
// file agent under a read-only parent, through the real loop and the stand-in
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { StandinTurn } from '#standin/types.js';
import type { BrainToolMessage } from '../../core/contract/BrainMessage.js';
import { genBhrain } from '../genBhrain.js';
import { loadAgentSkills } from '../agent-skills/loadAgentSkills.js';
import { genToolset } from '../toolboxes/genToolset.js';
import { loadAgentFiles } from './loadAgentFiles.js';
import { systemOf, toolNamesOf } from '#standin/requestParts.js';
import { tempDir } from '#test-helpers/fs.js';
import { genGitRepo } from '#test-helpers/git.js';

const { standin, contextFor } = useStandin();

/** a temp git repository with these files, and a config dir of its own */
const genRepo = async (files: Record<string, string>) => {
  const base = tempDir('bhrain-agent-files-');
  const repo = genGitRepo({ dir: join(base, 'repo'), files });
  return { repo, env: { ...process.env, BHRAIN_CONFIG_DIR: join(base, 'config') } };
};

const agent = (front: string, body = 'AGENT-BODY') => `---\n${front}\n---\n${body}\n`;

describe('agent files: front matter as Claude Code writes it', () => {
  it("maps Claude Code's tool names case-insensitively (a comma-separated string or a YAML list), warns on a tool bhrain lacks or a pattern, and maps model: sonnet|opus|haiku|inherit or a slug", async () => {
    const { repo, env } = await genRepo({
      '.claude/agents/reviewer.md': agent(
        'name: reviewer\ndescription: Reviews\ntools: Read, GREP, glob, MultiEdit, WebFetch, Bash(git diff:*)\nmodel: sonnet',
      ),
      '.claude/agents/listed.md': agent(
        'description: Lists\ntools:\n  - Read\n  - mcp__github__get_issue\n  - Task\nmodel: claude-haiku-4-5',
      ),
      '.bhrain/agents/cheap.md': agent('name: cheap\ndescription: Cheap\natom: qwen/qwen-plus'),
      '.bhrain/agents/typo.md': agent('name: typo\ndescription: Typo\nmodel: claude/sonnett'),
      '.bhrain/agents/inherits.md': agent('name: inherits\ndescription: Inherits\nmodel: inherit'),
    });
    const read = await loadAgentFiles({ cwd: repo, parentAtom: 'claude/haiku' }, { env });
    const byName = Object.fromEntries(read.types.map((type) => [type.name, type]));
    expect(byName.reviewer).toMatchObject({
      toolNames: ['read', 'grep', 'glob', 'edit'],
      atom: 'claude/sonnet',
      systemPrompt: 'AGENT-BODY',
    });
    // the name comes from the file's when the front matter has none
    expect(byName.listed).toMatchObject({ toolNames: ['read', 'mcp__github__get_issue', 'task'], atom: 'claude/claude-haiku-4-5' });
    // no tools: = the parent's tools, as Claude Code means it
    expect(byName.cheap).toMatchObject({ inheritTools: true, atom: 'qwen/qwen-plus' });
    expect(byName.typo.atom).toBeUndefined();
    expect(byName.inherits.atom).toBeUndefined();
    const reviewerFile = join(repo, '.claude/agents/reviewer.md');
    expect(read.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^agent file ${join(repo, '.bhrain/agents/typo.md')}: its model "claude/sonnett" is unknown \\(unknown atom 'claude/sonnett'.*\\): the parent's atom is used$`,
        ),
      ),
      expect.stringContaining(`agent file ${reviewerFile}: its tool "WebFetch" is not one of bhrain's`),
      expect.stringContaining(`agent file ${reviewerFile}: its tool "Bash(git diff:*)" has a pattern`),
    ]);

    // on a qwen parent, Claude's aliases inherit the parent's atom, with a warning
    const onQwen = await loadAgentFiles({ cwd: repo, parentAtom: 'qwen/qwen-plus' }, { env });
    expect(onQwen.types.find((type) => type.name === 'reviewer')!.atom).toBeUndefined();
    expect(onQwen.warnings).toContainEqual(
      `agent file ${reviewerFile}: its model sonnet is Claude's, and this run is on qwen/qwen-plus: the parent's atom is used`,
    );
  });

  it('hostile: a 10 MB agent file, broken YAML, a YAML bomb, tools: of the wrong shape, disallowedTools, a bad name and no body are each a warning naming the file; the good file is still read', async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...'bcdefghi'.split('').map((key, index) => `${key}: &${key} [${Array(9).fill(`*${'abcdefghi'[index]}`).join(',')}]`),
    ];
    const { repo, env } = await genRepo({
      '.bhrain/agents/huge.md': agent('name: huge\ndescription: Huge', 'x'.repeat(10 * 1024 * 1024)),
      '.bhrain/agents/broken.md': agent('name: broken\ndescription: "unclosed'),
      '.bhrain/agents/bomb.md': agent(`name: bomb\ndescription: Bomb\n${bomb.join('\n')}`),
      '.bhrain/agents/shape.md': agent('name: shape\ndescription: Shape\ntools: 42'),
      '.bhrain/agents/narrow.md': agent('name: narrow\ndescription: Narrow\ndisallowedTools: Bash'),
      '.bhrain/agents/badname.md': agent('name: "bad name!"\ndescription: Bad'),
      '.bhrain/agents/empty.md': agent('name: empty\ndescription: Empty', ''),
      '.bhrain/agents/dupkeys.md': agent('name: dup\nname: dup2\ndescription: Dup'),
      '.bhrain/agents/good.md': agent('name: good\ndescription: Good\ntools: Read'),
    });
    const read = await loadAgentFiles({ cwd: repo }, { env });
    expect(read.types.map((type) => type.name)).toEqual(['good']);
    const warningOf = (file: string) => read.warnings.find((warning) => warning.includes(join(repo, '.bhrain/agents', file)));
    expect(warningOf('huge.md')).toMatch(/is 10\.0 MiB, more than the 64 KiB an instruction file may be; it is skipped$/);
    expect(warningOf('broken.md')).toMatch(/has front matter that is not valid YAML \(line \d\): /);
    expect(warningOf('bomb.md')).toMatch(/has front matter that could not be read: .*alias/i);
    expect(warningOf('shape.md')).toContain('has tools: that is neither a list of tool names nor a comma-separated string');
    expect(warningOf('narrow.md')).toContain('has disallowedTools:, which bhrain does not read');
    expect(warningOf('badname.md')).toContain(`has the name "bad name!"`);
    expect(warningOf('empty.md')).toContain('has no instructions after its front matter');
    expect(warningOf('dupkeys.md')).toMatch(/not valid YAML.*(unique|Map keys)/i);
    expect(read.warnings).toHaveLength(8);
  });
});

describe('Agent Skills: front matter and places', () => {
  it('reads name (the directory name when absent) and description; a missing description is skipped; a long one is cut to 1024 characters; a nearer skill hides a farther one; the user config dir comes last', async () => {
    const { repo, env } = await genRepo({
      'pkg/.bhrain/skills/deploy/SKILL.md': '---\ndescription: Deploy the package\n---\nDEPLOY\n',
      '.claude/skills/deploy/SKILL.md': '---\nname: deploy\ndescription: Deploy the repository\n---\nFARTHER\n',
      '.agents/skills/nodesc/SKILL.md': '---\nname: nodesc\n---\nNO DESCRIPTION\n',
      '.agents/skills/long/SKILL.md': `---\nname: long\ndescription: ${'word '.repeat(400)}\n---\nLONG\n`,
    });
    await mkdir(join(env.BHRAIN_CONFIG_DIR, 'skills/mine'), { recursive: true });
    await writeFile(join(env.BHRAIN_CONFIG_DIR, 'skills/mine/SKILL.md'), '---\nname: mine\ndescription: My own\n---\nMINE\n');
    const read = await loadAgentSkills({ cwd: join(repo, 'pkg') }, { env });
    expect(read.skills.map((skill) => [skill.name, skill.path])).toEqual([
      ['deploy', join(repo, 'pkg/.bhrain/skills/deploy/SKILL.md')],
      ['long', join(repo, '.agents/skills/long/SKILL.md')],
      ['mine', join(env.BHRAIN_CONFIG_DIR, 'skills/mine/SKILL.md')],
    ]);
    expect(read.skills[1].description).toHaveLength(1024);
    expect(read.found.find((skill) => skill.shadowedBy)).toMatchObject({
      path: join(repo, '.claude/skills/deploy/SKILL.md'),
      shadowedBy: join(repo, 'pkg/.bhrain/skills/deploy/SKILL.md'),
    });
    expect(read.warnings).toEqual([
      `Agent Skill ${join(repo, '.agents/skills/long/SKILL.md')}: its description is cut to 1024 characters`,
      `Agent Skill ${join(repo, '.agents/skills/nodesc/SKILL.md')} has no description: the model reads it to know when to use the skill (description: ...); it is skipped`,
    ]);
  });
});

describe.each(PROTOCOL_SLUGS)('agent files: a child is never looser than its parent, on $slug', ({ slug }) => {
  it('a file asking for Bash under a read-only parent does not get it: the child is offered only the parent tools it named, and a bash call finds no tool; a file without tools: gets the read-only parent tools', async () => {
    const { repo, env } = await genRepo({
      '.claude/agents/runner.md': agent('name: runner\ndescription: Runs things\ntools: Read, Bash', 'RUNNER-PROMPT'),
      '.claude/agents/helper.md': agent('name: helper\ndescription: Helps', 'HELPER-PROMPT'),
      'target.txt': 'keep\n',
    });
    const { types, warnings } = await loadAgentFiles({ cwd: repo, parentAtom: slug }, { env });
    expect(warnings).toEqual([]);
    standin().respond = (request): StandinTurn => {
      const system = systemOf(request);
      const said = JSON.stringify(request.body.messages);
      if (system.includes('RUNNER-PROMPT'))
        return said.includes('rm target.txt') && /not found|no tool|unknown tool/i.test(said)
          ? { text: 'RUNNER: no bash' }
          : { toolCalls: [{ name: 'bash', input: { command: 'rm target.txt' } }] };
      if (system.includes('HELPER-PROMPT')) return { text: 'HELPER: done' };
      return said.includes('RUNNER: no bash') && said.includes('HELPER: done')
        ? { text: 'parent done' }
        : {
            toolCalls: [
              { name: 'task', input: { description: 'run', prompt: 'delete target.txt', subagent_type: 'runner' } },
              { name: 'task', input: { description: 'help', prompt: 'help', subagent_type: 'helper' } },
            ],
          };
    };
    // a read-only parent: its tools only read
    const brain = genBhrain({ atom: slug, toolBoxes: genToolset({ access: 'read-only' }), subagents: { types } });
    const result = await brain.invoke({ prompt: 'go' }, contextFor({ cwd: repo }));
    expect(result.output).toBe('parent done');
    const runner = standin().requests.filter((request) => systemOf(request).includes('RUNNER-PROMPT'));
    const helper = standin().requests.filter((request) => systemOf(request).includes('HELPER-PROMPT'));
    expect(toolNamesOf(runner[0])).toEqual(['read']);
    expect(toolNamesOf(helper[0])).toEqual(['glob', 'grep', 'read', 'websearch']);
    const runnerResults = result.subagents
      .find((subagent) => subagent.type === 'runner')!
      .transcript.filter((message): message is BrainToolMessage => message.role === 'tool');
    expect(runnerResults[0]).toMatchObject({ toolName: 'bash', isError: true });
  });
});

// Agent Skills (SKILL.md) and subagents from agent files, through the built CLI and the stand-in,
// as a user sets them up: files in a temp git repository, the CLI as a child process, the requests the model received
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { StandinRequest, StandinTurn } from '#standin/types.js';
import { useStandin } from '#standin/useStandin.js';
import { genCliEnv, runBhrain } from './runCli.js';
import { systemOf, toolNamesOf } from '#standin/requestParts.js';
import { tempDir } from '#test-helpers/fs.js';
import { genGitRepo } from '#test-helpers/git.js';

const { standin } = useStandin();

/** the messages of a request, as text */
const messagesOf = (request: StandinRequest): string => JSON.stringify(request.body.messages);
/** the text of the last tool result a request carries, or '' */
const lastToolResult = (request: StandinRequest): string => {
  const last = request.body.messages.at(-1);
  if (!last || !Array.isArray(last.content)) return '';
  return last.content
    .filter((block: { type: string }) => block.type === 'tool_result')
    .map((block: { content: unknown }) => (typeof block.content === 'string' ? block.content : JSON.stringify(block.content)))
    .join('\n');
};

/** a temp git repository with these files, and a home of its own for the run (refs, config dir) */
const genRepo = async (files: Record<string, string>) => {
  const base = tempDir('bhrain-skills-');
  const repo = genGitRepo({ dir: join(base, 'repo'), files });
  const home = join(base, 'home');
  return { repo, home, env: genCliEnv({ standin: standin(), home }) };
};

/** a SKILL.md in Agent Skills' format */
const skillFile = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

const RELEASE_BODY = 'RELEASE-BODY-MARKER: to cut a release, read reference.md beside this file and write its code word to RELEASE.txt.';

describe('Agent Skills (SKILL.md) through bhrain act', () => {
  it('skills: a skill the model loads and follows: the system prompt lists its name and description, not its body; the skill tool returns the body; the model reads the file beside it and acts on it', async () => {
    const { repo, env } = await genRepo({
      '.bhrain/skills/release/SKILL.md': skillFile('release', 'How to cut a release of this project', RELEASE_BODY),
      '.bhrain/skills/release/reference.md': 'The release code word is PELICAN-42.\n',
      'src/app.ts': 'export const app = 1;\n',
    });
    const reference = join(repo, '.bhrain/skills/release/reference.md');
    standin().respond = (request): StandinTurn => {
      const result = lastToolResult(request);
      if (result.includes('PELICAN-42')) return { toolCalls: [{ name: 'write', input: { path: 'RELEASE.txt', content: 'PELICAN-42\n' } }] };
      if (result.includes('RELEASE-BODY-MARKER')) return { toolCalls: [{ name: 'read', input: { path: reference } }] };
      if (result.includes('wrote') || result.includes('Wrote') || result.includes('RELEASE.txt')) return { text: 'Released: PELICAN-42' };
      return { toolCalls: [{ name: 'skill', input: { name: 'release' } }] };
    };
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--input', 'cut a release'], cwd: repo, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: 'Released: PELICAN-42\n' });

    const [first, second, third] = standin().requests;
    // progressive loading: the name and description are in the system prompt, the body is not
    expect(systemOf(first)).toContain('- release: How to cut a release of this project');
    expect(JSON.stringify(first.body)).not.toContain('RELEASE-BODY-MARKER');
    expect(toolNamesOf(first)).toContain('skill');
    // the skill tool answered with the body and the file beside it
    expect(lastToolResult(second)).toContain(RELEASE_BODY);
    expect(lastToolResult(second)).toContain(reference);
    expect(lastToolResult(second)).not.toContain('PELICAN-42');
    // the model read the file beside it, and acted on it
    expect(lastToolResult(third)).toContain('PELICAN-42');
    expect(await readFile(join(repo, 'RELEASE.txt'), 'utf8')).toBe('PELICAN-42\n');

    // ask is read-only and has the skill tool too (its effect is read)
    standin().reset();
    standin().script({ text: 'ok' });
    const asked = await runBhrain({ args: ['ask', '--atom', 'claude/haiku', '--input', 'how do I cut a release?'], cwd: repo, env });
    expect(asked.code).toBe(0);
    expect(toolNamesOf(standin().requests[0])).toEqual(['glob', 'grep', 'read', 'skill', 'websearch']);
    expect(systemOf(standin().requests[0])).toContain('- release: How to cut a release of this project');
  });

  it('skills hostile: a 10 MB SKILL.md and one with broken YAML are warnings naming the file and the problem; the run goes on with the good skill, and the 10 MB body never enters the prompt', async () => {
    const huge = `---\nname: huge\ndescription: a huge skill\n---\n${'HUGE-BODY-MARKER '.repeat(620_000)}\n`;
    expect(Buffer.byteLength(huge)).toBeGreaterThan(10_000_000);
    const { repo, env } = await genRepo({
      '.bhrain/skills/huge/SKILL.md': huge,
      '.bhrain/skills/broken/SKILL.md': '---\nname: broken\ndescription: [never closed\n---\nBROKEN-BODY\n',
      '.claude/skills/nofront/SKILL.md': 'just text, no front matter\n',
      '.agents/skills/good/SKILL.md': skillFile('good', 'A good skill', 'GOOD-BODY'),
    });
    standin().script({ text: 'done' });
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--input', 'hi'], cwd: repo, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: 'done\n' });
    expect(run.stderr).toContain(`Agent Skill ${join(repo, '.bhrain/skills/huge/SKILL.md')} is 10.1 MiB, more than the 64 KiB`);
    expect(run.stderr).toContain(
      `Agent Skill ${join(repo, '.bhrain/skills/broken/SKILL.md')} has front matter that is not valid YAML (line 3)`,
    );
    expect(run.stderr).toContain(`Agent Skill ${join(repo, '.claude/skills/nofront/SKILL.md')} has no front matter`);
    const [request] = standin().requests;
    expect(Buffer.byteLength(JSON.stringify(request.body))).toBeLessThan(100_000);
    expect(JSON.stringify(request.body)).not.toContain('HUGE-BODY-MARKER');
    expect(systemOf(request)).toContain('- good: A good skill');
    expect(systemOf(request)).not.toContain('- huge:');
    expect(systemOf(request)).not.toContain('- broken:');

    // with -o json the same warnings are in the result object, and the run completes
    standin().reset();
    standin().script({ text: 'done' });
    const json = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '-o', 'json', '--input', 'hi'], cwd: repo, env });
    const result = JSON.parse(json.stdout);
    expect(result).toMatchObject({ termination: 'complete', exitCode: 0 });
    expect(result.warnings).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`Agent Skill ${join(repo, '.bhrain/skills/huge/SKILL.md')} is 10.1 MiB`),
        expect.stringContaining(`Agent Skill ${join(repo, '.bhrain/skills/broken/SKILL.md')} has front matter that is not valid YAML`),
      ]),
    );
  });
});

describe('Agent Skills: the listing budget, --no-skills and bhrain skills', () => {
  it('skills: with 50 skills the system prompt grows by their names and descriptions only (asserted on the request the stand-in received)', async () => {
    // the skills are git-ignored, so the git line of the system prompt stays the same between the runs
    const { repo, env } = await genRepo({ '.gitignore': '.bhrain/\n' });
    const addSkill = (index: number) =>
      mkdir(join(repo, `.bhrain/skills/skill-${index}`), { recursive: true }).then(() =>
        writeFile(
          join(repo, `.bhrain/skills/skill-${index}/SKILL.md`),
          skillFile(
            `skill-${index}`,
            `Does task number ${index} of this project`,
            `BODY-MARKER-${index} ${'long instructions '.repeat(200)}`,
          ),
        ),
      );
    const systemOfRun = async () => {
      standin().reset();
      standin().script({ text: 'ok' });
      const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--input', 'hi'], cwd: repo, env });
      expect(run.code).toBe(0);
      expect(JSON.stringify(standin().requests[0].body)).not.toMatch(/BODY-MARKER/);
      return systemOf(standin().requests[0]);
    };
    await addSkill(0);
    const withOne = await systemOfRun();
    for (let index = 1; index < 50; index++) await addSkill(index);
    const withFifty = await systemOfRun();
    const added = Array.from({ length: 49 }, (_, index) => `- skill-${index + 1}: Does task number ${index + 1} of this project`);
    for (const line of added) expect(withFifty).toContain(`\n${line}\n`);
    // take the 49 new lines out and the prompt is the one-skill prompt, to the character
    expect(added.reduce((text, line) => text.replace(`${line}\n`, ''), withFifty)).toBe(withOne);
  });

  it('skills: past the listing budget, the skills left out are named in a warning and the model gets a notice; a left-out skill still loads by name', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 80 }, (_, index) => [
        `.bhrain/skills/s${String(index).padStart(2, '0')}/SKILL.md`,
        skillFile(
          `s${String(index).padStart(2, '0')}`,
          `Skill ${index}, ${'a long description of what it does '.repeat(4)}`,
          `S-BODY-${index}`,
        ),
      ]),
    );
    const { repo, env } = await genRepo(files);
    standin().respond = (request): StandinTurn =>
      lastToolResult(request).includes('S-BODY-79') ? { text: 'loaded' } : { toolCalls: [{ name: 'skill', input: { name: 's79' } }] };
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--input', 'hi'], cwd: repo, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: 'loaded\n' });
    const system = systemOf(standin().requests[0]);
    const listed = system.split('\n').filter((line) => /^- s\d\d: /.test(line)).length;
    expect(listed).toBeGreaterThan(10);
    expect(listed).toBeLessThan(80);
    expect(system).toContain(`[bhrain: ${80 - listed} more skills are not listed here: this list is capped at 8000 characters.`);
    expect(system).not.toContain('- s79:');
    expect(run.stderr).toContain(`${80 - listed} of 80 Agent Skills are left out of the system prompt's list`);
    expect(lastToolResult(standin().requests[1])).toContain('S-BODY-79');
  });

  it('skills: --no-skills offers no skill tool and lists none; skills: false in .bhrain/settings.json does the same', async () => {
    const { repo, env } = await genRepo({ '.bhrain/skills/release/SKILL.md': skillFile('release', 'How to cut a release', 'BODY') });
    standin().script({ text: 'ok' });
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--no-skills', '--input', 'hi'], cwd: repo, env });
    expect(run.code).toBe(0);
    expect(toolNamesOf(standin().requests[0])).not.toContain('skill');
    expect(systemOf(standin().requests[0])).not.toContain('release');
    standin().reset();
    await writeFile(join(repo, '.bhrain/settings.json'), JSON.stringify({ skills: false }));
    standin().script({ text: 'ok' });
    expect((await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--input', 'hi'], cwd: repo, env })).code).toBe(0);
    expect(toolNamesOf(standin().requests[0])).not.toContain('skill');
  });

  it('bhrain skills: lists what was found and from where (project, the user config dir), a nearer skill hiding a farther one of its name, bad files as warnings; -o json', async () => {
    const { repo, env } = await genRepo({
      '.bhrain/skills/release/SKILL.md': skillFile('release', 'Release, the project way', 'B'),
      'pkg/.claude/skills/lint/SKILL.md': skillFile('lint', 'Lint this package', 'B'),
      '.agents/skills/broken/SKILL.md': '---\nname: [x\n---\nB\n',
    });
    const user = join(env.BHRAIN_CONFIG_DIR, 'skills');
    await mkdir(join(user, 'release'), { recursive: true });
    await mkdir(join(user, 'notes'), { recursive: true });
    await writeFile(join(user, 'release/SKILL.md'), skillFile('release', 'My own release steps', 'B'));
    await writeFile(join(user, 'notes/SKILL.md'), skillFile('notes', 'Take notes', 'B'));
    const run = await runBhrain({ args: ['skills'], cwd: join(repo, 'pkg'), env });
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+SCOPE\s+SKILL\.md\s+DESCRIPTION$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 3))).toEqual([
      ['lint', 'project', join(repo, 'pkg/.claude/skills/lint/SKILL.md')],
      ['release', 'project', join(repo, '.bhrain/skills/release/SKILL.md')],
      ['notes', 'user', join(user, 'notes/SKILL.md')],
      ['release', 'user', `${join(user, 'release/SKILL.md')} (hidden by a nearer one)`],
    ]);
    expect(run.stderr).toContain(
      `bhrain skills: warning: Agent Skill ${join(repo, '.agents/skills/broken/SKILL.md')} has front matter that is not valid YAML`,
    );
    const json = JSON.parse((await runBhrain({ args: ['skills', '-o', 'json'], cwd: join(repo, 'pkg'), env })).stdout);
    expect(json).toMatchObject({ schemaVersion: 1, cwd: join(repo, 'pkg') });
    expect(
      json.skills.map((skill: { name: string; scope: string; shadowedBy: string | null }) => [skill.name, skill.scope, skill.shadowedBy]),
    ).toEqual([
      ['lint', 'project', null],
      ['release', 'project', null],
      ['notes', 'user', null],
      ['release', 'user', join(repo, '.bhrain/skills/release/SKILL.md')],
    ]);
    expect(json.warnings).toHaveLength(1);
    const bad = await runBhrain({ args: ['skills', '-o', 'yaml'], cwd: repo, env });
    expect(bad.code).toBe(2);
  });
});

/** the system prompt marks of the two file agents */
const REVIEWER_BODY = 'REVIEWER-PROMPT: you review code for bugs; report file and line.';
const LISTER_BODY = 'LISTER-PROMPT: you list what you find.';

describe('subagents from agent files through bhrain act', () => {
  it("agents: .claude/agents/reviewer.md with `tools: Read, Grep` (Claude Code's string) and a YAML list: the model calls task with that type; the child's request carries the file's body as its system prompt and only the read tools", async () => {
    const { repo, env } = await genRepo({
      '.claude/agents/reviewer.md': `---\nname: reviewer\ndescription: Reviews a change for bugs\ntools: Read, Grep\nmodel: inherit\n---\n${REVIEWER_BODY}\n`,
      '.bhrain/agents/lister.md': `---\nname: lister\ndescription: Lists files\ntools:\n  - glob\n  - Read\n---\n${LISTER_BODY}\n`,
      'src/app.ts': 'export const app = 1;\n',
    });
    standin().respond = (request): StandinTurn => {
      const system = systemOf(request);
      if (system.includes('REVIEWER-PROMPT')) return { text: 'REVIEW: no bugs' };
      if (system.includes('LISTER-PROMPT')) return { text: 'LIST: src/app.ts' };
      return messagesOf(request).includes('REVIEW: no bugs')
        ? { text: 'all done' }
        : {
            toolCalls: [
              { name: 'task', input: { description: 'review', prompt: 'review src/app.ts', subagent_type: 'reviewer' } },
              { name: 'task', input: { description: 'list', prompt: 'list the files', subagent_type: 'lister' } },
            ],
          };
    };
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--input', 'review my change'], cwd: repo, env });
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr.includes('warn') }).toEqual({
      code: 0,
      stdout: 'all done\n',
      stderr: false,
    });

    const requests = standin().requests;
    const parent = requests.filter((request) => !/REVIEWER-PROMPT|LISTER-PROMPT/.test(systemOf(request)));
    const reviewer = requests.filter((request) => systemOf(request).includes('REVIEWER-PROMPT'));
    const lister = requests.filter((request) => systemOf(request).includes('LISTER-PROMPT'));
    // the types sit beside the built-in ones in the task tool
    const task = parent[0].body.tools.find((tool: { name: string }) => tool.name === 'task');
    expect(task.input_schema.properties.subagent_type.enum).toEqual(['explore', 'plan', 'general-purpose', 'lister', 'reviewer']);
    expect(task.description).toContain('- reviewer: Reviews a change for bugs');
    expect(reviewer).toHaveLength(1);
    expect(systemOf(reviewer[0])).toContain(REVIEWER_BODY);
    expect(toolNamesOf(reviewer[0])).toEqual(['grep', 'read']);
    expect(toolNamesOf(lister[0])).toEqual(['glob', 'read']);
    expect(messagesOf(reviewer[0])).toContain('review src/app.ts');
    expect(messagesOf(reviewer[0])).not.toContain('review my change');
  });

  it('agents hostile: a file asking for Bash under a parent whose rules deny bash cannot run it (never looser); a broken agent file and an unknown tool are warnings naming the file; the run goes on', async () => {
    const { repo, env } = await genRepo({
      '.claude/agents/runner.md': `---\nname: runner\ndescription: Runs commands\ntools: Read, Bash, NotebookEdit\n---\nRUNNER-PROMPT\n`,
      '.claude/agents/broken.md': '---\nname: broken\ndescription: "unclosed\n---\nBROKEN\n',
      'rules.json': JSON.stringify({ allow: ['read', 'glob', 'grep', 'task'], deny: ['bash'] }),
    });
    await writeFile(join(repo, 'secret-target.txt'), 'keep me\n');
    standin().respond = (request): StandinTurn => {
      if (systemOf(request).includes('RUNNER-PROMPT'))
        return lastToolResult(request)
          ? { text: `CHILD: ${lastToolResult(request).slice(0, 200)}` }
          : { toolCalls: [{ name: 'bash', input: { command: 'rm secret-target.txt' } }] };
      return messagesOf(request).includes('CHILD:')
        ? { text: 'done' }
        : { toolCalls: [{ name: 'task', input: { description: 'run', prompt: 'delete secret-target.txt', subagent_type: 'runner' } }] };
    };
    const run = await runBhrain({
      args: ['act', '--atom', 'claude/haiku', '--permission', 'rules.json', '--sandbox', 'off', '--input', 'go'],
      cwd: repo,
      env,
    });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: 'done\n' });
    expect(run.stderr).toContain(`agent file ${join(repo, '.claude/agents/broken.md')} has front matter that is not valid YAML`);
    expect(run.stderr).toContain(`agent file ${join(repo, '.claude/agents/runner.md')}: its tool "NotebookEdit" is not one of bhrain's`);
    const child = standin().requests.filter((request) => systemOf(request).includes('RUNNER-PROMPT'));
    expect(toolNamesOf(child[0])).toEqual(['bash', 'read']);
    expect(lastToolResult(child[1])).toMatch(/denied|not allowed/i);
    expect(await readFile(join(repo, 'secret-target.txt'), 'utf8')).toBe('keep me\n');
  });

  it('agents hostile: under a read-only act (--permission readOnly) a file agent that asks for Bash never runs: the task call itself is denied, so no child request is made', async () => {
    const { repo, env } = await genRepo({
      '.claude/agents/runner.md': `---\nname: runner\ndescription: Runs commands\ntools: Bash\n---\nRUNNER-PROMPT\n`,
      'target.txt': 'keep me\n',
    });
    standin().respond = (request): StandinTurn =>
      systemOf(request).includes('RUNNER-PROMPT')
        ? { toolCalls: [{ name: 'bash', input: { command: 'rm target.txt' } }] }
        : lastToolResult(request)
          ? { text: `parent saw: ${lastToolResult(request).slice(0, 120)}` }
          : { toolCalls: [{ name: 'task', input: { description: 'run', prompt: 'delete target.txt', subagent_type: 'runner' } }] };
    const run = await runBhrain({ args: ['act', '--atom', 'claude/haiku', '--permission', 'readOnly', '--input', 'go'], cwd: repo, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/parent saw: .*read-only/);
    expect(standin().requests.filter((request) => systemOf(request).includes('RUNNER-PROMPT'))).toEqual([]);
    expect(await readFile(join(repo, 'target.txt'), 'utf8')).toBe('keep me\n');
  });

  it('bhrain agents: lists the built-in types and those of the agent files, with their tools, model and file; a nearer file hides a farther one', async () => {
    const { repo, env } = await genRepo({
      '.claude/agents/reviewer.md': `---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: sonnet\n---\nR\n`,
      '.bhrain/agents/reviewer.md': `---\nname: reviewer\ndescription: Reviews code, bhrain's way\ntools: [read]\n---\nR\n`,
    });
    const run = await runBhrain({ args: ['agents'], cwd: repo, env });
    expect(run.code).toBe(0);
    const rows = run.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/).slice(0, 4));
    expect(rows).toEqual([
      ['NAME', 'SOURCE', 'TOOLS', 'MODEL'],
      ['explore', 'built-in', 'read-only', 'inherit'],
      ['plan', 'built-in', 'read-only', 'inherit'],
      ['general-purpose', 'built-in', "parent's", 'inherit'],
      ['reviewer', join(repo, '.bhrain/agents/reviewer.md'), 'read', 'inherit'],
      ['reviewer', `${join(repo, '.claude/agents/reviewer.md')} (hidden by a nearer one)`, 'read,grep', 'sonnet'],
    ]);
  });
});

// a custom tool's effect and paths are judged as the built-in tools' are: no list of names decides
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

import { useStandin } from '#standin/useStandin.js';
import type { BrainToolMessage } from '../../core/contract/BrainMessage.js';
import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import { invoke } from '../genBhrain.js';
import { defineTool } from '../tool/defineTool.js';
import { toolBoxOf } from '../tool/executeTool.js';
import type { BhrainPermissionGuard, BhrainPrompter } from './BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from './builtinGuards.js';
import { genRulesGuard } from './genRulesGuard.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const toolMessages = (result: BhrainSessionResult) =>
  result.transcript.filter((message): message is BrainToolMessage => message.role === 'tool');

/** .what = a custom toolbox: save_note writes a file (effect write, its path declared), peek reads one (effect read) */
const genNotesBox = () =>
  toolBoxOf({
    name: 'notes',
    tools: [
      defineTool({
        name: 'save_note',
        description: 'saves a note to a file',
        input: z.strictObject({ file: z.string(), text: z.string() }),
        effect: 'write',
        paths: (input) => [{ path: input.file, access: 'write' }],
        execute: async ({ file, text }, context) => {
          const target = resolve(context.cwd, file);
          await mkdir(dirname(target), { recursive: true });
          await writeFile(target, text);
          return { success: true, output: `saved ${file}` };
        },
      }),
      defineTool({
        name: 'peek',
        description: 'reads a note',
        input: z.strictObject({ file: z.string() }),
        effect: 'read',
        paths: (input) => [{ path: input.file, access: 'read' }],
        execute: async ({ file }, context) => ({ success: true, output: await readFile(resolve(context.cwd, file), 'utf8') }),
      }),
    ],
  });

/** .what = runs one turn of the given calls with the notes box, then an answer; the tool messages and what the prompter was asked */
const runCalls = async (
  calls: Array<{ name: string; input: Record<string, unknown> }>,
  options: { guard: BhrainPermissionGuard; cwd: string; answer?: boolean; env?: Record<string, string | undefined> },
) => {
  const asked: string[] = [];
  const prompter: BhrainPrompter | undefined =
    options.answer === undefined ? undefined : async ({ reason }) => (asked.push(reason), options.answer!);
  standin().script({ toolCalls: calls }, { text: 'done' });
  const result = await invoke(
    { config: { atom: 'claude/haiku', toolBoxes: [genNotesBox()], permissionGuard: options.guard }, prompt: 'take notes' },
    contextFor({ cwd: options.cwd, prompter, ...(options.env ? { env: options.env } : {}) }),
  );
  return { messages: toolMessages(result), asked };
};

describe('tool contract: a custom tool with effect write and paths is path-checked like write', () => {
  it('tool contract: a write outside the workspace is asked about whatever the guard says, and refused when it cannot be asked', async () => {
    const cwd = await tempDir('bhrain-effects-');
    const outside = await tempDir('bhrain-effects-');
    const target = join(outside, 'escaped.md');
    const denied = await runCalls([{ name: 'save_note', input: { file: target, text: 'x' } }], { guard: allowAll, cwd });
    expect(denied.messages[0].content).toMatch(
      new RegExp(
        `^permission denied: save_note would change ${target}, outside the workspace ${cwd}, and approval was needed but there is no way to ask`,
      ),
    );
    await expect(readFile(target, 'utf8')).rejects.toThrow();
    const declined = await runCalls([{ name: 'save_note', input: { file: '../escaped.md', text: 'x' } }], {
      guard: allowAll,
      cwd,
      answer: false,
    });
    expect(declined.asked).toEqual([expect.stringContaining('outside the workspace')]);
    expect(declined.messages[0].content).toMatch(/^permission denied: the user declined save_note/);
    const approved = await runCalls([{ name: 'save_note', input: { file: target, text: 'approved' } }], {
      guard: allowAll,
      cwd,
      answer: true,
    });
    expect(approved.messages[0]).toMatchObject({ isError: false, content: `saved ${target}` });
    expect(await readFile(target, 'utf8')).toBe('approved');
  });

  it('tool contract: a write into a protected path (git hooks) is asked about, as write and edit are', async () => {
    const cwd = await tempDir('bhrain-effects-');
    await mkdir(join(cwd, '.git', 'hooks'), { recursive: true });
    const { messages, asked } = await runCalls([{ name: 'save_note', input: { file: '.git/hooks/pre-commit', text: 'rm -rf ~' } }], {
      guard: allowAll,
      cwd,
      answer: false,
    });
    expect(asked).toEqual([expect.stringMatching(/save_note would change .*\.git\/hooks\/pre-commit, a protected path/)]);
    expect(messages[0].content).toMatch(/^permission denied: the user declined save_note/);
    await expect(readFile(join(cwd, '.git', 'hooks', 'pre-commit'), 'utf8')).rejects.toThrow();
  });

  it('tool contract: rules such as write(src/**) and deny write(.env) judge the paths a custom tool writes', async () => {
    const cwd = await tempDir('bhrain-effects-');
    const guard = genRulesGuard({ allow: ['write(src/**)', 'peek'], deny: ['write(.env)'] });
    const { messages } = await runCalls(
      [
        { name: 'save_note', input: { file: 'src/a.md', text: 'a' } },
        { name: 'save_note', input: { file: '.env', text: 'SECRET=1' } },
        { name: 'save_note', input: { file: 'docs/b.md', text: 'b' } },
      ],
      { guard, cwd },
    );
    expect(messages.map((message) => message.content)).toEqual([
      'saved src/a.md',
      'permission denied: denied by rule `write(.env)` (.env). save_note was not run; adjust your approach.',
      expect.stringMatching(/^permission denied: no rule allows save_note \(docs\/b\.md\), and approval was needed/),
    ]);
  });

  it('tool contract: a path hidden from the model (a credential store) is refused to a custom tool too, even once approved', async () => {
    const cwd = await tempDir('bhrain-effects-');
    const home = await tempDir('bhrain-effects-');
    await mkdir(join(home, '.ssh'));
    const { messages } = await runCalls([{ name: 'save_note', input: { file: join(home, '.ssh', 'config'), text: 'Host *' } }], {
      guard: allowAll,
      cwd,
      answer: true,
      env: { PATH: process.env.PATH, HOME: home },
    });
    expect(messages[0].content).toMatch(/^Refused to write .*\.ssh\/config: it is in ~\/\.ssh/);
    await expect(readFile(join(home, '.ssh', 'config'), 'utf8')).rejects.toThrow();
  });
});

describe('tool contract: the builtin guards read the effect', () => {
  it('tool contract: readOnly runs a custom read tool and denies a custom write tool', async () => {
    const cwd = await tempDir('bhrain-effects-');
    await writeFile(join(cwd, 'n.md'), 'note');
    const { messages } = await runCalls(
      [
        { name: 'peek', input: { file: 'n.md' } },
        { name: 'save_note', input: { file: 'm.md', text: 'x' } },
      ],
      { guard: readOnly, cwd },
    );
    expect(messages.map((message) => message.content)).toEqual([
      'note',
      expect.stringMatching(/^permission denied: save_note is not allowed: this session is read-only/),
    ]);
  });

  it('tool contract: promptForWrites asks before everything but a read', async () => {
    const cwd = await tempDir('bhrain-effects-');
    await writeFile(join(cwd, 'n.md'), 'note');
    const { messages, asked } = await runCalls(
      [
        { name: 'peek', input: { file: 'n.md' } },
        { name: 'save_note', input: { file: 'm.md', text: 'x' } },
      ],
      { guard: promptForWrites, cwd, answer: true },
    );
    expect(asked).toEqual(['save_note changes files']);
    expect(messages.map((message) => message.content)).toEqual(['note', 'saved m.md']);
  });

  it('a guard called with only { call } judges the built-in tools by their declarations', async () => {
    const cwd = '/work/project';
    expect(await readOnly.check({ call: { id: 'c', name: 'grep', input: { pattern: 'x' } } }, { cwd })).toEqual({ decision: 'allow' });
    expect((await readOnly.check({ call: { id: 'c', name: 'bash', input: { command: 'ls' } } }, { cwd })).decision).toBe('deny');
    // a tool bhrain does not know is unknown: it may change anything
    expect((await readOnly.check({ call: { id: 'c', name: 'peek', input: { file: 'x' } } }, { cwd })).decision).toBe('deny');
    expect(await readOnly.check({ call: { id: 'c', name: 'peek', input: {} }, effect: 'read', paths: [] }, { cwd })).toEqual({
      decision: 'allow',
    });
  });
});

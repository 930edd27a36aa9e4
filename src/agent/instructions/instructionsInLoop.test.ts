import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { BhrainConfig } from '../config/BhrainConfig.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain } from '../genBhrain.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { loadProjectInstructions } from './loadProjectInstructions.js';
import { systemOf } from '#standin/requestParts.js';
import { genGitRepo } from '#test-helpers/git.js';

const { standin, contextFor } = useStandin();

/** a real repository on branch `feature/x` with AGENTS.md at its root and in sub/, one changed and one untracked file */
const genRepo = async () => {
  const repo = genGitRepo({
    prefix: 'bhrain-loop-instructions-',
    branch: 'feature/x',
    files: { 'AGENTS.md': 'RULE-ROOT: answer in haiku\n', 'sub/AGENTS.md': 'RULE-SUB: never touch vendor/\n' },
    commit: 'first',
  });
  await writeFile(join(repo, 'AGENTS.md'), 'RULE-ROOT: answer in haiku\nRULE-ROOT-2: cite paths\n');
  await writeFile(join(repo, 'notes.txt'), 'untracked\n');
  return { repo, sub: join(repo, 'sub'), env: { BHRAIN_CONFIG_DIR: join(repo, 'no-user-config') } };
};

/** a toolbox with one tool that returns `size` characters of filler */
const bulky: BhrainToolBox = {
  name: 'bulky',
  definitions: [
    { name: 'fetch', description: 'returns a big blob', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } },
  ],
  execute: async ({ call }) => ({ callId: call.id, success: true, output: `blob ${call.input.n}: ${'z'.repeat(5_000)}` }),
};

describe.each(PROTOCOL_SLUGS)('project instructions in the loop, on $slug', ({ slug }) => {
  it("project instructions: config.instructions from the loader reach the model in a <project-instructions> block, root → subdir, before the caller's systemPrompt", async () => {
    const { sub, env } = await genRepo();
    const instructions = (await loadProjectInstructions({ cwd: sub }, { env })).text;
    standin().script({ text: 'ok' });
    await genBhrain({ atom: slug, toolBoxes: [], instructions, systemPrompt: 'CALLER-ADDITION' }).invoke(
      { prompt: 'hi' },
      contextFor({ cwd: sub }),
    );
    const system = systemOf(standin().requests[0]);
    expect(system).toMatch(
      /<project-instructions>\n.*\n<file path="[^"]+\/AGENTS\.md">\nRULE-ROOT: answer in haiku\nRULE-ROOT-2: cite paths\n<\/file>\n<file path="[^"]+\/sub\/AGENTS\.md">\nRULE-SUB: never touch vendor\/\n<\/file>\n<\/project-instructions>\n\nCALLER-ADDITION$/,
    );
    // never in the conversation's messages (openai carries the system prompt as a system message)
    const conversation = standin().requests[0].body.messages.filter((message: { role: string }) => message.role !== 'system');
    expect(JSON.stringify(conversation)).not.toContain('RULE-ROOT');
  });

  it('project instructions: a rule from AGENTS.md survives a compaction: the request after it still carries the rule in its system prompt', async () => {
    const { repo, env } = await genRepo();
    const instructions = (await loadProjectInstructions({ cwd: repo }, { env })).text;
    const brain = genBhrain({ atom: slug, toolBoxes: [bulky], instructions, limits: { contextTokens: 6_000 } });
    standin().respond = (request) =>
      systemOf(request).includes('You compact the working memory') ? { text: 'SUMMARY: blobs fetched' } : undefined;
    standin().script(...[1, 2, 3, 4, 5].map((n) => ({ toolCalls: [{ name: 'fetch', input: { n } }] })), { text: 'done' });
    const events: BhrainEvent[] = [];
    const result = await brain.invoke({ prompt: 'fetch five blobs' }, contextFor({ cwd: repo, onEvent: (event) => events.push(event) }));

    expect(result.output).toBe('done');
    expect(events.filter((event) => event.type === 'Compacted').length).toBeGreaterThan(0);
    const requests = standin().requests;
    const summary = requests.findIndex((request) => systemOf(request).includes('You compact the working memory'));
    expect(summary).toBeGreaterThan(0);
    const after = requests[summary + 1];
    expect(JSON.stringify(after.body)).toContain('SUMMARY: blobs fetched');
    expect(systemOf(after)).toContain('RULE-ROOT: answer in haiku');
    expect(systemOf(requests.at(-1)!)).toContain('RULE-ROOT: answer in haiku');
  });

  it('git awareness: with gitStatus the system prompt states the repo root, the branch and the dirty counts; without it, nothing', async () => {
    const { repo, sub } = await genRepo();
    standin().script({ text: 'ok' }, { text: 'ok' });
    await genBhrain({ atom: slug, toolBoxes: [], gitStatus: true }).invoke({ prompt: 'hi' }, contextFor({ cwd: sub }));
    expect(systemOf(standin().requests[0])).toContain(
      `You work in the directory ${sub} on ${process.platform}. Relative paths resolve there. It is in the git repository ${repo}: branch feature/x; working tree dirty (1 changed, 1 untracked), as of the session's start.`,
    );
    expect(systemOf(standin().requests[0])).not.toContain('notes.txt');
    await genBhrain({ atom: slug, toolBoxes: [] }).invoke({ prompt: 'hi' }, contextFor({ cwd: sub }));
    expect(systemOf(standin().requests[1])).not.toContain('git repository');
  });
});

describe('project instructions: config validation', () => {
  it('project instructions: instructions that are not a string, or a gitStatus that is not a boolean, fail at configuration time naming the field', () => {
    expect(() => genBhrain({ atom: 'qwen', instructions: 42 } as unknown as BhrainConfig)).toThrow(/instructions must be a string/);
    expect(() => genBhrain({ atom: 'qwen', gitStatus: 'yes' } as unknown as BhrainConfig)).toThrow(/gitStatus must be true or false/);
    expect(genBhrain({ atom: 'qwen', instructions: '  ' }).config).toMatchObject({ instructions: null, gitStatus: false });
  });
});

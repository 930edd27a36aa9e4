import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { BadRequestError } from '../core/contract/errors.js';
import { Bhrain, genBhrain, invoke } from './genBhrain.js';
import type { BhrainMemoryManager } from './memory/BhrainMemoryManager.js';
import type { BhrainPermissionGuard } from './permission/BhrainPermissionGuard.js';
import type { BhrainToolBox } from './tool/BhrainToolBox.js';

const { standin, contextFor } = useStandin();

/** a toolbox of named echo tools */
const genEchoBox = (name: string, tools: string[]): BhrainToolBox => ({
  name,
  definitions: tools.map((tool) => ({ name: tool, description: `${tool} from ${name}`, inputSchema: { type: 'object', properties: {} } })),
  execute: async ({ call }) => ({ callId: call.id, success: true, output: `${call.name} ran in ${name}` }),
});
const sentToolNames = (index: number): string[] => {
  const body = standin().requests[index].body;
  return body.tools.map((tool: { name?: string; function?: { name: string } }) => tool.name ?? tool.function?.name);
};
const sentSystem = (index: number): string =>
  JSON.stringify(standin().requests[index].body.system ?? standin().requests[index].body.messages[0]);

describe.each(PROTOCOL_SLUGS)('toolbox configuration on $slug', ({ slug }) => {
  it('merges the tools of multiple toolboxes, and the system prompt reflects the combined set', async () => {
    standin().script({ text: 'hi' });
    await genBhrain({ atom: slug, toolBoxes: [genEchoBox('alpha', ['a1', 'a2']), genEchoBox('beta', ['b1'])] }).invoke(
      { prompt: 'hi' },
      contextFor(),
    );
    expect(sentToolNames(0)).toEqual(['a1', 'a2', 'b1']);
    expect(sentSystem(0)).toMatch(/- a1: a1 from alpha.*- b1: b1 from beta/s);
  });

  it('offers only the tools of a single toolbox', async () => {
    standin().script({ text: 'hi' });
    await genBhrain({ atom: slug, toolBoxes: [genEchoBox('alpha', ['a1'])] }).invoke({ prompt: 'hi' }, contextFor());
    expect(sentToolNames(0)).toEqual(['a1']);
  });

  it('uses the default toolbox (files, bash, websearch) when none is given', async () => {
    standin().script({ text: 'hi' });
    const brain = genBhrain({ atom: slug });
    expect(brain.toolBoxes.list().map((box) => box.name)).toEqual(['files', 'bash', 'websearch']);
    await brain.invoke({ prompt: 'hi' }, contextFor());
    expect(sentToolNames(0)).toEqual(['read', 'write', 'edit', 'glob', 'grep', 'bash', 'websearch']);
  });

  it('raises an error at configuration time for conflicting tool names', () => {
    expect(() => genBhrain({ atom: slug, toolBoxes: [genEchoBox('alpha', ['read']), genEchoBox('beta', ['read'])] })).toThrow(
      "conflicting tool name 'read': offered by toolbox 'alpha' and by toolbox 'beta'. Rename one tool or drop one toolbox",
    );
    expect(standin().requests).toHaveLength(0);
  });

  it('a toolbox added at runtime is offered, injected into context and routed; a removed one answers "tool not found"', async () => {
    const brain = genBhrain({ atom: slug, toolBoxes: [genEchoBox('alpha', ['a1'])] });
    brain.toolBoxes.add(genEchoBox('gamma', ['g1']));
    standin().script({ toolCalls: [{ name: 'g1' }] }, { text: 'used g1' });
    const added = await brain.invoke({ prompt: 'use g1' }, contextFor());
    expect(sentToolNames(0)).toEqual(['a1', 'g1']);
    expect(sentSystem(0)).toContain('- g1: g1 from gamma');
    expect(added.transcript.find((message) => message.role === 'tool')?.content).toBe('g1 ran in gamma');

    brain.toolBoxes.remove('gamma');
    standin().script({ toolCalls: [{ name: 'g1' }] }, { text: 'g1 is gone' });
    const removed = await brain.invoke({ prompt: 'use g1' }, contextFor());
    expect(sentToolNames(2)).toEqual(['a1']);
    expect(removed.transcript.find((message) => message.role === 'tool')?.content).toBe(
      "tool not found: 'g1'. Available tools: a1. Call one of these instead.",
    );
    expect(() => brain.toolBoxes.remove('gamma')).toThrow(/no toolbox named 'gamma' to remove/);
  });
});

describe('updatable config: memoryManager and permissionGuard, like toolBoxes', () => {
  // docs/design/loop.md#config-and-plugins
  const counting = (name: string, seen: string[]): BhrainMemoryManager => ({
    name,
    shouldUpdate: () => (seen.push(name), false),
    getUpdate: () => ({ shouldUpdate: false }),
  });

  it('a memory manager set on a brain is consulted from the next iteration on, the running session included, and is the config the next session hashes', async () => {
    const seen: string[] = [];
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [genEchoBox('alpha', ['a1'])], memoryManager: counting('first', seen) });
    const configUuid = (await (standin().script({ text: 'hi' }), brain.invoke({ prompt: 'hi' }, contextFor()))).session.configUuid;
    const swap: BhrainToolBox = {
      ...genEchoBox('swap', ['swap']),
      execute: async ({ call }) => (
        brain.memoryManager.set(counting('second', seen)),
        { callId: call.id, success: true, output: 'swapped' }
      ),
    };
    brain.toolBoxes.add(swap);
    standin().script({ toolCalls: [{ name: 'a1' }] }, { toolCalls: [{ name: 'swap' }] }, { toolCalls: [{ name: 'a1' }] }, { text: 'done' });
    const result = await brain.invoke({ prompt: 'go' }, contextFor());
    expect(seen).toEqual(['first', 'second', 'second']);
    expect(brain.memoryManager.get().name).toBe('second');
    expect(brain.config.memoryManager.name).toBe('second');
    expect(result.session.configUuid).not.toBe(configUuid);
  });

  it('a permission guard set on a brain judges the next turn of a running session, and later sessions', async () => {
    const denyA1: BhrainPermissionGuard = {
      name: 'no-a1',
      check: ({ call }) => (call.name === 'a1' ? { decision: 'deny', reason: 'a1 is off now' } : { decision: 'allow' }),
    };
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [genEchoBox('alpha', ['a1', 'a2'])] });
    const swap: BhrainToolBox = {
      ...genEchoBox('swap', ['swap']),
      execute: async ({ call }) => (brain.permissionGuard.set(denyA1), { callId: call.id, success: true, output: 'swapped' }),
    };
    brain.toolBoxes.add(swap);
    standin().script({ toolCalls: [{ name: 'a1' }, { name: 'swap' }] }, { toolCalls: [{ name: 'a1' }, { name: 'a2' }] }, { text: 'done' });
    const result = await brain.invoke({ prompt: 'go' }, contextFor());
    const results = result.transcript.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(results[0]).toBe('a1 ran in alpha');
    expect(results[2]).toBe('permission denied: a1 is off now. a1 was not run; adjust your approach.');
    expect(results[3]).toBe('a2 ran in alpha');
    expect(brain.permissionGuard.get()).toBe(denyA1);
    expect(result.toolCalls.denials).toEqual([expect.objectContaining({ toolName: 'a1', by: 'guard' })]);
  });

  it('a plugin that lacks what the loop calls is a BadRequestError naming what is missing, and nothing changes', () => {
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [] });
    expect(() => brain.memoryManager.set({ name: 'half', shouldUpdate: () => false } as never)).toThrow(
      new BadRequestError('a memory manager must have getUpdate (a function); got an object'),
    );
    expect(() => brain.permissionGuard.set(null as never)).toThrow(
      'a permission guard must have a name (a non-empty string), check (a function); got null',
    );
    expect(brain.memoryManager.get().name).toBe('summarize-on-limit');
    expect(brain.permissionGuard.get().name).toBe('allowAll');
  });
});

describe('invalid input is a clear error, and no loop starts', () => {
  // docs/design/loop.md#invocation
  it('a prompt that is not a string is a BadRequestError saying what was wrong, not a raw TypeError; so is a history that is not a list', async () => {
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [] });
    for (const [prompt, got] of [
      [42, 'a number (42)'],
      [undefined, 'nothing'],
      [{ text: 'hi' }, 'an object'],
      [['hi'], 'an array'],
    ] as const) {
      const run = brain.invoke({ prompt: prompt as never }, contextFor());
      await expect(run).rejects.toThrow(BadRequestError);
      await expect(run).rejects.toThrow(
        `invoke needs prompt to be a string (the task, e.g. { prompt: 'summarize readme.md' }); got ${got}`,
      );
    }
    await expect(invoke({ config: { atom: 'claude/haiku' }, prompt: 7 as never }, contextFor())).rejects.toThrow(BadRequestError);
    await expect(brain.invoke({ prompt: 'hi', history: 'earlier' as never }, contextFor())).rejects.toThrow(
      'invoke needs history to be an array of messages, or absent; got a string',
    );
    expect(standin().requests).toHaveLength(0);
    expect(brain.session).toBeNull();
  });
});

describe('the Bhrain operations: Bhrain.invoke and Bhrain.configure', () => {
  // docs/design/loop.md#invocation
  it('given a partial config, when Bhrain.configure resolves it, then the defaults are filled in and a bad one is refused', () => {
    const config = Bhrain.configure({ config: { atom: 'claude/haiku', maxIterations: 7 } });
    expect(config).toMatchObject({ maxIterations: 7, atom: { slug: 'claude/haiku' } });
    expect(config.toolBoxes.length).toBeGreaterThan(0);
    expect(() => Bhrain.configure({ config: { atom: 'claude/haiku', maxIterations: -1 } })).toThrow(BadRequestError);
  });

  it('given a config and a prompt, when Bhrain.invoke runs, then one session answers', async () => {
    standin().script({ text: 'done' });
    const result = await Bhrain.invoke({ config: { atom: 'claude/haiku' }, prompt: 'hi' }, contextFor());
    expect(result).toMatchObject({ output: 'done', termination: 'complete', session: { status: 'COMPLETED' } });
  });
});

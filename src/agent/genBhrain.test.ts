import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '../../test/standin/useStandin.js';
import { genBhrain } from './genBhrain.js';
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

describe.each(PROTOCOL_SLUGS)('usecase.7: toolbox configuration on $slug', ({ slug }) => {
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

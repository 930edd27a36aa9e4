// the call order of one turn follows each tool's declared effect, not a list of names
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

import { useStandin } from '#standin/useStandin.js';
import type { BrainToolMessage } from '../../core/contract/BrainMessage.js';
import { invoke } from '../genBhrain.js';
import { defineTool, type BhrainToolEffect } from '../tool/defineTool.js';
import { toolBoxOf } from '../tool/executeTool.js';

const { standin, contextFor } = useStandin();

/** .what = a toolbox of tools named after their effect, each recording when it started and ended */
const genEffectsBox = () => {
  const timeline: string[] = [];
  const tool = (name: string, effect: BhrainToolEffect | null) =>
    defineTool({
      name,
      description: `a ${effect ?? 'unknown'} tool`,
      input: z.strictObject({}),
      effect,
      execute: async () => {
        timeline.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 40));
        timeline.push(`end ${name}`);
        return { success: true, output: name };
      },
    });
  const box = toolBoxOf({
    name: 'effects',
    tools: [
      tool('look', 'read'),
      tool('look_again', 'read'),
      tool('save', 'write'),
      tool('save_again', 'write'),
      tool('run', 'exec'),
      tool('fetch', 'network'),
      tool('mystery', null),
    ],
  });
  return { box, timeline };
};

describe('tool contract: the call order of one turn follows effects', () => {
  it('tool contract: unknown, exec and network first and at once; then writes one at a time in the model order; then reads at once', async () => {
    const { box, timeline } = genEffectsBox();
    const order = ['look', 'save', 'run', 'save_again', 'mystery', 'look_again', 'fetch'];
    standin().script({ toolCalls: order.map((name) => ({ name, input: {} })) }, { text: 'done' });
    const result = await invoke({ config: { atom: 'claude/haiku', toolBoxes: [box] }, prompt: 'go' }, contextFor());
    // results keep the model's order
    expect(
      result.transcript.filter((message): message is BrainToolMessage => message.role === 'tool').map((message) => message.content),
    ).toEqual(order);
    const at = (entry: string) => timeline.indexOf(entry);
    // phase 1 runs concurrently, and ends before any write starts
    const first = ['run', 'mystery', 'fetch'];
    expect(timeline.slice(0, 3).sort()).toEqual(first.map((name) => `start ${name}`).sort());
    for (const name of first) expect(at(`end ${name}`)).toBeLessThan(at('start save'));
    // writes one at a time, in the model's order
    expect(timeline.slice(6, 10)).toEqual(['start save', 'end save', 'start save_again', 'end save_again']);
    // reads last, together
    expect(timeline.slice(10, 12).sort()).toEqual(['start look', 'start look_again']);
  });
});

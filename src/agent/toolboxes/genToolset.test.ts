import { describe, expect, it } from 'vitest';

import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { defineTool, type BhrainToolEffect } from '../tool/defineTool.js';
import { toolBoxOf } from '../tool/executeTool.js';
import { genToolset, readDenialOf } from './genToolset.js';

const namesOf = (boxes: readonly BhrainToolBox[]) => boxes.flatMap((box) => box.definitions.map((definition) => definition.name)).sort();

describe('one toolset assembler: genToolset', () => {
  it('given no boxes, when all tools are asked for, then bhrain’s own files, bash and websearch tools are offered', () => {
    expect(namesOf(genToolset({ access: 'all' }))).toEqual(['bash', 'edit', 'glob', 'grep', 'read', 'websearch', 'write']);
  });

  it('given no boxes, when read-only is asked for, then only the reading tools are offered, and no bash toolbox is built', () => {
    const boxes = genToolset({ access: 'read-only' });
    expect(namesOf(boxes)).toEqual(['glob', 'grep', 'read', 'websearch']);
    expect(boxes.map((box) => box.name)).not.toContain('bash');
  });

  it('given boxes, when read-only is asked for, then a box without a tool whose effect is read is left out, the others keep only those, and a plain box (effect unknown) keeps none', async () => {
    const tool = (name: string, effect: BhrainToolEffect) =>
      defineTool({ name, description: name, input: { type: 'object' }, effect, execute: async () => ({ success: true, output: name }) });
    const plain: BhrainToolBox = {
      name: 'plain',
      definitions: [{ name: 'lookup', description: 'lookup', inputSchema: { type: 'object' } }],
      execute: async ({ call }) => ({ callId: call.id, success: true, output: call.name }),
    };
    const boxes = genToolset({
      access: 'read-only',
      boxes: [
        toolBoxOf({ name: 'files', tools: [tool('read', 'read'), tool('write', 'write')] }),
        toolBoxOf({ name: 'custom', tools: [tool('deploy', 'exec')] }),
        plain,
      ],
    });
    expect(namesOf(boxes)).toEqual(['read']);
    const refused = await boxes[0].execute({ call: { id: 'c1', name: 'write', input: {} } }, {} as never);
    expect(refused).toMatchObject({ success: false, output: expect.stringMatching(/write/) });
  });

  it('given a sandbox and a guard that hands a path back, then the files and bash tools hide and hand back the same paths', () => {
    expect(
      readDenialOf({ sandbox: { denyRead: ['/srv/secrets'], allowRead: ['~/.a'] }, permissionGuard: { allowRead: ['~/.npmrc'] } }),
    ).toEqual({
      denyRead: ['/srv/secrets'],
      allowRead: ['~/.a', '~/.npmrc'],
    });
  });
});

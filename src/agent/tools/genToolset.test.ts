import { describe, expect, it } from 'vitest';

import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genToolset, readDenialOf } from './genToolset.js';

const namesOf = (boxes: readonly BhrainToolBox[]) => boxes.flatMap((box) => box.definitions.map((definition) => definition.name)).sort();

describe('issue 31 one toolset assembler: genToolset', () => {
  it('given no boxes, when all tools are asked for, then bhrain’s own files, bash and websearch tools are offered', () => {
    expect(namesOf(genToolset({ access: 'all' }))).toEqual(['bash', 'edit', 'glob', 'grep', 'read', 'websearch', 'write']);
  });

  it('given no boxes, when read-only is asked for, then only the reading tools are offered, and no bash toolbox is built', () => {
    const boxes = genToolset({ access: 'read-only' });
    expect(namesOf(boxes)).toEqual(['glob', 'grep', 'read', 'websearch']);
    expect(boxes.map((box) => box.name)).not.toContain('bash');
  });

  it('given boxes, when read-only is asked for, then a box without a reading tool is left out and the others keep only theirs', async () => {
    const box = (name: string, tools: string[]): BhrainToolBox => ({
      name,
      definitions: tools.map((tool) => ({ name: tool, description: tool, inputSchema: { type: 'object' } })),
      execute: async ({ call }) => ({ callId: call.id, success: true, output: call.name }),
    });
    const boxes = genToolset({ access: 'read-only', boxes: [box('files', ['read', 'write']), box('custom', ['deploy'])] });
    expect(namesOf(boxes)).toEqual(['read']);
    const refused = await boxes[0].execute({ call: { id: 'c1', name: 'write', input: {} } }, {} as never);
    expect(refused).toMatchObject({ success: false, output: 'tool write is not offered in this session' });
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

// bhrain's own tools give the model's JSON Schema as written and build their zod schema on the first call;
// each given JSON Schema must be exactly what its zod schema makes, or the model would be told one contract and held to another
import { describe, expect, it } from 'vitest';

import { skillInput } from '../agent-skills/genAgentSkillToolBox.js';
import { genTaskInput } from '../subagents/genTaskToolBox.js';
import { genBashInput, type BashSettings } from '../toolboxes/bash/genBashToolBox.js';
import { editInput } from '../toolboxes/files/edit.js';
import { globInput } from '../toolboxes/files/glob.js';
import { grepInput } from '../toolboxes/files/grep.js';
import { readInput } from '../toolboxes/files/read.js';
import { writeInput } from '../toolboxes/files/write.js';
import { websearchInput } from '../toolboxes/websearch/genWebsearchToolBox.js';
import { jsonSchemaOfZod } from './defineTool.js';
import { deferInput, makeTool, type BhrainDeferredToolInput } from './makeTool.js';
import * as z from 'zod/mini';

const bashWith = (timeouts: Pick<BashSettings, 'defaultTimeoutMs' | 'maxTimeoutMs'>) => genBashInput(timeouts as BashSettings);
const inputs: Array<[string, BhrainDeferredToolInput<unknown>]> = [
  ['read', readInput],
  ['write', writeInput],
  ['edit', editInput],
  ['glob', globInput],
  ['grep', grepInput],
  ['websearch', websearchInput],
  ['bash', bashWith({ defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000 })],
  ['bash', bashWith({ defaultTimeoutMs: 5_000, maxTimeoutMs: 30_000 })],
  ['task', genTaskInput(['explore', 'plan', 'general-purpose'])],
  ['task', genTaskInput(['reviewer'])],
  ['skill', skillInput],
];

describe('tool contract: deferred inputs of the built-in tools', () => {
  it.each(inputs.map(([name, input], index) => ({ name, input, index })))(
    'given $name (#$index), its JSON Schema as written is exactly the one its zod schema makes',
    async ({ name, input }) => {
      expect(input.jsonSchema).toEqual(jsonSchemaOfZod(name, await input.zod()));
    },
  );

  it('given a deferred input, no zod schema is built until a call is checked, and then once; makeTool takes it without loading zod', async () => {
    let built = 0;
    const tool = makeTool({
      name: 'count',
      description: 'counts',
      input: deferInput(
        { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
        async () => {
          built++;
          return z.strictObject({ n: z.int() });
        },
      ),
      effect: 'read',
      execute: async ({ n }) => ({ success: true, output: String(n + 1) }),
    });
    expect(tool.definition.inputSchema).toMatchObject({ required: ['n'] });
    expect(built).toBe(0);
    expect(await tool.check({ n: 1 })).toEqual({ ok: true, value: { n: 1 } });
    expect(await tool.check({ n: 'x' })).toMatchObject({ ok: false, problem: expect.stringContaining('input.n') });
    expect(built).toBe(1);
  });
  it('given an input that is neither zod, deferred nor an object JSON Schema, or a zod schema without defineTool, makeTool refuses it saying why', () => {
    const spec = { name: 'odd', description: 'odd', effect: 'read' as const, execute: async () => ({ success: true, output: '' }) };
    for (const input of [null, 'x', { type: 'string' }])
      expect(() => makeTool({ ...spec, input: input as never })).toThrow(
        "the input of tool odd must be a zod object schema or a JSON Schema with type 'object'",
      );
    expect(() => makeTool({ ...spec, input: z.strictObject({}) })).toThrow(
      'the input of tool odd is a zod schema: declare the tool with defineTool, which reads zod',
    );
  });
});

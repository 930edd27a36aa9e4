import { describe, expect, it } from 'vitest';

import { compileJsonSchema, JSON_SCHEMA_DRAFTS, readSchemaDraft } from './compileJsonSchema.js';

const tagOf = (declared: unknown, use: 'toolInput' | 'output') =>
  use === 'toolInput' ? readSchemaDraft(declared, use).tag : (readSchemaDraft(declared, use)?.tag ?? null);

describe('one ajv set-up: the drafts, the classes and the options of both uses in one module', () => {
  it('given an output schema, then $schema must name a draft exactly (2020-12 when absent); a tool reads the draft it mentions, else draft-07', () => {
    const declared = [
      undefined,
      'https://json-schema.org/draft/2020-12/schema',
      'http://json-schema.org/draft-07/schema#',
      'https://json-schema.org/draft/2019-09/schema',
      'http://json-schema.org/draft-04/schema#',
      'https://json-schema.org/draft/2020-12/schma',
    ];
    expect(declared.map((value) => tagOf(value, 'output'))).toEqual(['2020-12', '2020-12', 'draft-07', '2019-09', null, null]);
    expect(declared.map((value) => tagOf(value, 'toolInput'))).toEqual([
      'draft-07',
      '2020-12',
      'draft-07',
      '2019-09',
      'draft-07',
      '2020-12',
    ]);
  });

  it('given a keyword ajv does not know, then a tool schema compiles (suppliers ignore it) and an output schema does not (a typo)', () => {
    const schema = { type: 'object', requird: ['a'] };
    const draft = JSON_SCHEMA_DRAFTS[0];
    expect(compileJsonSchema({ schema, draft, use: 'toolInput' })({ b: 1 })).toBe(true);
    expect(() => compileJsonSchema({ schema, draft, use: 'output' })).toThrow(/unknown keyword: "requird"/);
  });

  it('given the 2020-12 draft, then prefixItems is enforced by the 2020 class for both uses', () => {
    const schema = { type: 'array', prefixItems: [{ type: 'string' }] };
    for (const use of ['toolInput', 'output'] as const)
      expect([compileJsonSchema({ schema, draft: JSON_SCHEMA_DRAFTS[0], use })([1]), use]).toEqual([false, use]);
  });
});

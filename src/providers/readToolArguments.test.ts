import { describe, expect, it } from 'vitest';

import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { BadRequestError } from '../core/contract/errors.js';
import { checkToolInput, readToolArguments, UnreadToolInput } from './readToolArguments.js';

const tool = (inputSchema: Record<string, unknown>): BrainToolDefinition[] => [
  { name: 'probe', description: 'a probe', inputSchema: { type: 'object', ...inputSchema } },
];
const errorOf = (value: unknown, tools: BrainToolDefinition[]) => checkToolInput({ value, name: 'probe', tools }).inputError;

describe('readToolArguments (schema checks: ajv for every tool)', () => {
  it('schema checks: anyOf is enforced, and the message says what each choice wanted', () => {
    const tools = tool({ properties: { limit: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } });
    expect(errorOf({ limit: 3 }, tools)).toBeUndefined();
    expect(errorOf({ limit: null }, tools)).toBeUndefined();
    expect(errorOf({ limit: '3' }, tools)).toMatch(
      /input\.limit must match one of its anyOf choices: input\.limit must be integer, got string, or input\.limit must be null, got string/,
    );
  });

  it('schema checks: oneOf is enforced, including a value matching two choices', () => {
    const tools = tool({ properties: { n: { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 0 }] } } });
    expect(errorOf({ n: 1.5 }, tools)).toBeUndefined();
    expect(errorOf({ n: 2 }, tools)).toMatch(/input\.n must match exactly one of its oneOf choices, but matches 2/);
    expect(errorOf({ n: 'x' }, tools)).toMatch(/input\.n must match one of its oneOf choices/);
  });

  it('schema checks: enum and const are enforced, with the allowed values and the value received', () => {
    const tools = tool({ properties: { unit: { enum: ['c', 'f'] }, kind: { const: 'probe' } } });
    expect(errorOf({ unit: 'k', kind: 'other' }, tools)).toMatch(
      /input\.unit must be one of "c", "f", got "k"; input\.kind must be "probe", got "other"/,
    );
  });

  it('schema checks: nested objects and arrays are checked with a readable path', () => {
    const tools = tool({
      properties: {
        edits: {
          type: 'array',
          items: { type: 'object', properties: { old: { type: 'string' } }, required: ['old'], additionalProperties: false },
        },
      },
    });
    expect(errorOf({ edits: [{ old: 'a' }, { new: 'b' }] }, tools)).toMatch(
      /input\.edits\[1\]\.old is required; input\.edits\[1\]\.new is not a known field/,
    );
  });

  it('schema checks: the wording the model already knows is kept (type, required, unknown field)', () => {
    const tools = tool({ properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false });
    expect(errorOf({ path: 42 }, tools)).toBe(
      'the arguments of probe do not fit its schema: input.path must be string, got integer. Call probe again with corrected arguments',
    );
    expect(errorOf({}, tools)).toMatch(/input\.path is required/);
    expect(errorOf({ path: 'a', extra: 1 }, tools)).toMatch(/input\.extra is not a known field/);
    expect(errorOf({ path: 'a' }, tools)).toBeUndefined();
  });

  it('schema checks: a nullable type list reads as "string or null"', () => {
    expect(errorOf({ s: 1 }, tool({ properties: { s: { type: ['string', 'null'] } } }))).toMatch(
      /input\.s must be string or null, got integer/,
    );
  });

  it('schema checks: formats are annotations, not checked (ajv-formats is not a dependency)', () => {
    expect(errorOf({ when: 'not a date' }, tool({ properties: { when: { type: 'string', format: 'date-time' } } }))).toBeUndefined();
  });

  it('schema checks: a schema is compiled once and reused for every call of the tool', () => {
    const tools = tool({ properties: { n: { type: 'integer', minimum: 1 } } });
    expect(errorOf({ n: 0 }, tools)).toMatch(/input\.n must be >= 1/);
    expect(errorOf({ n: 0 }, tools)).toMatch(/input\.n must be >= 1/);
    expect(errorOf({ n: 1 }, tools)).toBeUndefined();
  });

  it('schema checks: two tools whose schemas share an $id do not collide', () => {
    const a = tool({ $id: 'same', properties: { n: { type: 'integer' } } });
    const b = tool({ $id: 'same', properties: { n: { type: 'string' } } });
    expect(errorOf({ n: 'x' }, a)).toMatch(/must be integer/);
    expect(errorOf({ n: 'x' }, b)).toBeUndefined();
  });

  it('schema checks: a tool schema ajv cannot compile is a bad request naming the tool', () => {
    expect(() => errorOf({}, tool({ properties: { n: { type: 'integer', minimum: 'one' } } }))).toThrow(BadRequestError);
    expect(() => errorOf({}, tool({ properties: { n: { type: 'integer', minimum: 'one' } } }))).toThrow(
      /input schema of tool probe is not a valid JSON Schema/,
    );
  });

  it('schema checks: draft 2020-12 schemas (prefixItems) are read by the 2020 validator', () => {
    const tools = tool({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } },
    });
    expect(errorOf({ pair: ['a', 'b'] }, tools)).toMatch(/input\.pair\[1\] must be integer, got string/);
  });

  it('schema checks: raw arguments that are not JSON stay an inputError that does not quote them', () => {
    const result = readToolArguments({ raw: '{"path": "sk-secret', name: 'probe' });
    expect(result.inputError).toMatch(/the arguments of probe are not valid JSON/);
    expect(result.inputError).not.toMatch(/sk-secret/);
  });

  it('arguments read only in part (UnreadToolInput) become an inputError quoting the problem', () => {
    const result = checkToolInput({
      value: new UnreadToolInput({ path: 'a' }, '<parameter=path> is not closed'),
      name: 'probe',
      tools: tool({}),
    });
    expect(result).toEqual({
      input: { path: 'a' },
      inputError: expect.stringMatching(/^the call to probe could not be read exactly: <parameter=path> is not closed\. Call probe again/),
    });
  });
});

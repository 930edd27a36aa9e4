import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { BrainToolDefinition } from '../core/contract/BrainMessage.js';
import { BadRequestError } from '../core/contract/errors.js';
import { genBrainAtom } from './genBrainAtom.js';
import { renderToolDescription } from './renderToolDescription.js';

const { standin, contextFor } = useStandin();

const bash: BrainToolDefinition = {
  name: 'bash',
  description: 'Runs a shell command.',
  inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false },
  strict: true,
  examples: [{ input: { command: 'npm test -- --run' }, description: 'run the tests once' }, { input: { command: 'git status' } }],
};
const read: BrainToolDefinition = {
  name: 'read',
  description: 'Reads a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  strict: false,
};
const plain: BrainToolDefinition = {
  name: 'glob',
  description: 'Finds files.',
  inputSchema: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
};

const RENDERED_BASH =
  'Runs a shell command.\n\nExamples:\n- run the tests once: {"command":"npm test -- --run"}\n- {"command":"git status"}';

/** .what = the tools of a recorded request, read in either protocol's shape */
const toolsSent = (body: Record<string, unknown>, protocol: 'anthropic' | 'openai') =>
  (body.tools as Array<Record<string, any>>).map((tool) =>
    protocol === 'anthropic'
      ? { name: tool.name, description: tool.description, strict: tool.strict }
      : { name: tool.function.name, description: tool.function.description, strict: tool.function.strict },
  );

describe('tool definitions: examples are rendered into the description, in one place', () => {
  // docs/design/tools.md#definition
  it('given examples with and without a description, when rendered, then each is a line under Examples:', () => {
    expect(renderToolDescription(bash)).toBe(RENDERED_BASH);
  });

  it('given no examples, when rendered, then the description is unchanged', () => {
    expect(renderToolDescription(plain)).toBe('Finds files.');
    expect(renderToolDescription({ ...plain, examples: [] })).toBe('Finds files.');
  });

  it('given an example that does not fit the schema, when rendered, then it fails loud naming the tool and the example', () => {
    const wrong = { ...bash, examples: [{ input: { command: 'ls' } }, { input: { cmd: 'ls' } }] };
    expect(() => renderToolDescription(wrong)).toThrow(BadRequestError);
    expect(() => renderToolDescription(wrong)).toThrow(
      /example 2 of tool bash does not fit the tool's input schema .*Fix or remove the example/s,
    );
  });
});

describe.each(PROTOCOL_SLUGS)('tool definitions: strict and examples on the $protocol protocol', ({ protocol, slug }) => {
  // docs/design/tools.md#definition
  it('given tools with examples and strict flags, when the atom generates, then the request carries the rendered examples and the flags', async () => {
    standin().script({ text: 'ok' });
    await genBrainAtom({ slug }).generate({ messages: [{ role: 'user', content: 'hi' }], tools: [bash, read, plain] }, contextFor());
    expect(toolsSent(standin().requests[0].body, protocol)).toEqual([
      { name: 'bash', description: RENDERED_BASH, strict: true },
      { name: 'read', description: 'Reads a file.', strict: false },
      // no strict in the definition: no strict on the wire, so servers that do not know it see nothing new
      { name: 'glob', description: 'Finds files.', strict: undefined },
    ]);
    const raw = standin().requests[0].body.tools as Array<Record<string, any>>;
    expect('strict' in (protocol === 'anthropic' ? raw[2] : raw[2].function)).toBe(false);
  });

  it('given an example that does not fit its schema, when the atom generates, then it fails with a bad request and sends nothing', async () => {
    const wrong = { ...bash, examples: [{ input: { command: 42 } }] };
    await expect(
      genBrainAtom({ slug }).generate({ messages: [{ role: 'user', content: 'hi' }], tools: [wrong] }, contextFor()),
    ).rejects.toThrow(/example 1 of tool bash does not fit/);
    expect(standin().requests).toHaveLength(0);
  });
});

import { tmpdir } from 'node:os';

import { describe, expect, it } from 'vitest';
import { z as classic } from 'zod';
import * as z from 'zod/mini';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { silentLog } from '../../core/contract/BrainContext.js';
import type { BrainToolMessage } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import { invoke } from '../genBhrain.js';
import { genBashToolBox } from '../toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../toolboxes/files/genFilesToolBox.js';
import { genToolset } from '../toolboxes/genToolset.js';
import type { BhrainToolBox } from './BhrainToolBox.js';
import { BhrainTool } from './BhrainTool.js';
import { BhrainToolError, BhrainToolFatalError } from './BhrainToolError.js';
import { defineTool } from './defineTool.js';
import { preloadToolChecks, toolBoxOf } from './executeTool.js';
import { lenientInput } from './lenientInput.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
const toolMessages = (result: BhrainSessionResult) =>
  result.transcript.filter((message): message is BrainToolMessage => message.role === 'tool');
const toolContext = () => ({ cwd: process.cwd(), log: silentLog, env: {} });

/** .what = a tool that records the input its execute received */
const genRecordingTool = () => {
  const received: unknown[] = [];
  const tool = defineTool({
    name: 'paginate',
    description: 'pages through a list',
    input: z.strictObject({
      query: lenientInput.nonEmptyString().check(z.describe('what to list')),
      page: lenientInput.optional(lenientInput.integer(1).check(z.describe('the 1-based page'))),
      verbose: lenientInput.optional(lenientInput.boolean().check(z.describe('say more'))),
    }),
    effect: 'read',
    execute: async (input) => {
      received.push(input);
      // typed: page is a number here, verbose a boolean
      const page: number = input.page ?? 1;
      const verbose: boolean = input.verbose ?? false;
      return { success: true, output: `page ${page} of ${input.query}${verbose ? ' (verbose)' : ''}` };
    },
  });
  return { tool, received };
};

describe('tool contract: input is declared once and checked once', () => {
  it('tool contract: typed input arrives parsed: a number sent as "2", a boolean as "true", null for a left-out field', async () => {
    const { tool, received } = genRecordingTool();
    const box = toolBoxOf({ name: 'pages', tools: [tool] });
    const result = await box.execute(
      { call: { id: 'c1', name: 'paginate', input: { query: 'tools', page: '2', verbose: 'true' } } },
      toolContext(),
    );
    expect(result).toEqual({ callId: 'c1', success: true, output: 'page 2 of tools (verbose)' });
    await box.execute({ call: { id: 'c2', name: 'paginate', input: { query: 'tools', page: null } } }, toolContext());
    expect(received).toEqual([{ query: 'tools', page: 2, verbose: true }, { query: 'tools' }]);
  });

  it('tool contract: the JSON Schema the model sees reads as a hand-written one: descriptions, required, additionalProperties false', () => {
    const { tool } = genRecordingTool();
    expect(tool.definition).toEqual({
      name: 'paginate',
      description: 'pages through a list',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'what to list' },
          page: { type: 'integer', minimum: 1, description: 'the 1-based page' },
          verbose: { type: 'boolean', description: 'say more' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      // the effect rides along for the atom (which never sends it: the providers send name, description and schema)
      effect: 'read',
    });
  });

  it("tool contract: the built-in tools' schemas are those the model saw before (read, edit, bash)", () => {
    const files = genFilesToolBox();
    const read = files.definitions.find((definition) => definition.name === 'read')!;
    expect(read.inputSchema).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file to read: relative to the working directory, or absolute.' },
        offset: {
          type: 'integer',
          minimum: 1,
          description: 'The 1-based line number to start from (default 1). Use it to continue a long file.',
        },
        limit: { type: 'integer', minimum: 1, description: 'How many lines to show (default 2000).' },
      },
      required: ['path'],
      additionalProperties: false,
    });
    const edit = files.definitions.find((definition) => definition.name === 'edit')!;
    expect(edit.inputSchema).toMatchObject({
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
      properties: { replace_all: { type: 'boolean' } },
    });
    expect(genBashToolBox().definitions[0].inputSchema).toEqual({
      type: 'object',
      properties: {
        command: {
          type: 'string',
          description: 'The command to run with `bash -c`, in the working directory. Pipes, redirects, && and quoting work as in a shell.',
        },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          description: 'How long the command may run, in milliseconds. Default 120000, at most 600000.',
        },
      },
      required: ['command'],
      additionalProperties: false,
    });
  });

  it('tool contract: classic zod works as input too, and so does a JSON Schema object (checked with ajv)', async () => {
    const classicTool = defineTool({
      name: 'greet',
      description: 'greets',
      input: classic.object({ name: classic.string().describe('who') }).strict(),
      effect: 'read',
      execute: async ({ name }) => ({ success: true, output: `hello ${name}` }),
    });
    const jsonTool = defineTool({
      name: 'count',
      description: 'counts',
      input: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'], additionalProperties: false },
      effect: null,
      execute: async (input) => ({ success: true, output: `n=${String(input.n)}` }),
    });
    const box = toolBoxOf({ name: 'mixed', tools: [classicTool, jsonTool] });
    expect(classicTool.definition.inputSchema).toMatchObject({
      properties: { name: { type: 'string', description: 'who' } },
      required: ['name'],
    });
    expect(await box.execute({ call: { id: 'a', name: 'greet', input: { name: 'ada' } } }, toolContext())).toMatchObject({
      output: 'hello ada',
    });
    expect((await box.execute({ call: { id: 'b', name: 'greet', input: {} } }, toolContext())).output).toBe(
      'the arguments of greet do not fit its schema: input.name is required. Call greet again with corrected arguments',
    );
    expect((await box.execute({ call: { id: 'c', name: 'count', input: { n: -1 } } }, toolContext())).output).toBe(
      'the arguments of count do not fit its schema: input.n must be >= 0. Call count again with corrected arguments',
    );
  });

  it('tool contract: a tool whose input is not an object, or whose name a supplier would refuse, fails where it is defined', () => {
    const execute = async () => ({ success: true, output: '' });
    expect(() => defineTool({ name: 'a.b', description: '', input: z.object({}), effect: null, execute })).toThrow(BadRequestError);
    expect(() => defineTool({ name: 'bad', description: '', input: z.string(), effect: null, execute }).definition).toThrow(
      /the input of tool bad must be an object schema/,
    );
  });
});

describe('tool contract: ajv is made ready while the first request is out', () => {
  it("tool contract: a session whose boxes check input by JSON Schema (a plain box, a tool declared with JSON Schema) starts loading ajv as it opens; bhrain's own tools, checked by zod, start nothing", async () => {
    expect(preloadToolChecks(genToolset({ access: 'all' }))).toBeNull();
    const plain: BhrainToolBox = {
      name: 'plain',
      definitions: [{ name: 'noop', description: 'Does nothing.', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } }],
      execute: async ({ call }) => ({ callId: call.id, success: true, output: 'ok' }),
    };
    const declared = toolBoxOf({
      name: 'declared',
      tools: [
        defineTool({
          name: 'lookup',
          description: 'Looks a key up.',
          input: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { key: { type: 'string' } } },
          effect: 'read',
          execute: async () => ({ success: true, output: 'found' }),
        }),
      ],
    });
    for (const boxes of [[plain], [...genToolset({ access: 'all' }), declared]]) {
      const loading = preloadToolChecks(boxes);
      expect(loading).toBeInstanceOf(Promise);
      await expect(loading).resolves.toBeUndefined();
    }
    // what it made ready checks as before: a wrong type is answered, a right one runs
    const context = { cwd: tmpdir(), log: silentLog, env: {} };
    expect(await declared.execute({ call: { id: 'c1', name: 'lookup', input: { key: 1 } } }, context)).toMatchObject({
      success: false,
      output: expect.stringContaining('input.key must be string'),
    });
    expect(await declared.execute({ call: { id: 'c2', name: 'lookup', input: { key: 'a' } } }, context)).toMatchObject({
      success: true,
      output: 'found',
    });
  });
});

describe('tool contract: one error the model reads', () => {
  it('tool contract: an invalid input gives one error the model reads, naming every problem, and the tool never runs', async () => {
    const { tool, received } = genRecordingTool();
    standin().script(
      { toolCalls: [{ name: 'paginate', input: { query: '', page: 0, extra: true } }] },
      { toolCalls: [{ name: 'paginate', input: { query: 'tools', page: 3 } }] },
      { text: 'done' },
    );
    const result = await invoke(
      { config: { atom: 'claude/haiku', toolBoxes: [toolBoxOf({ name: 'pages', tools: [tool] })] }, prompt: 'go' },
      contextFor(),
    );
    const [wrong, right] = toolMessages(result);
    expect(wrong).toMatchObject({
      isError: true,
      content:
        'the arguments of paginate do not fit its schema: input.query must not be empty; input.page must be >= 1, got 0; input.extra is not a known field. Call paginate again with corrected arguments',
    });
    expect(right).toMatchObject({ isError: false, content: 'page 3 of tools' });
    expect(received).toEqual([{ query: 'tools', page: 3 }]);
    // what the model read is what the session answered: one message per call
    expect(JSON.stringify(standin().requests[1].body)).toContain('input.page must be >= 1, got 0');
  });

  it.each(PROTOCOL_SLUGS)(
    'tool contract: on $slug, a plain box (name, definitions, execute) is checked against its JSON Schema, once, by the session',
    async ({ slug }) => {
      const ran: unknown[] = [];
      const plain: BhrainToolBox = {
        name: 'timer',
        definitions: [
          {
            name: 'wait',
            description: 'waits',
            inputSchema: {
              type: 'object',
              properties: { seconds: { anyOf: [{ type: 'integer' }, { type: 'null' }] } },
              required: ['seconds'],
            },
          },
        ],
        execute: async ({ call }) => (ran.push(call.input), { callId: call.id, success: true, output: 'waited' }),
      };
      standin().script(
        { toolCalls: [{ name: 'wait', input: { seconds: 'soon' } }] },
        { toolCalls: [{ name: 'wait', input: { seconds: 2 } }] },
        { text: 'ok' },
      );
      const result = await invoke({ config: { atom: slug, toolBoxes: [plain] }, prompt: 'wait' }, contextFor());
      expect(toolMessages(result).map((message) => message.content)).toEqual([
        'the arguments of wait do not fit its schema: input.seconds must match one of its anyOf choices: input.seconds must be integer, got string, or input.seconds must be null, got string. Call wait again with corrected arguments',
        'waited',
      ]);
      expect(ran).toEqual([{ seconds: 2 }]);
    },
  );

  it('tool contract: unreadable arguments (not JSON) are answered once, with the provider reading and the session answering', async () => {
    const { tool, received } = genRecordingTool();
    standin().script({ toolCalls: [{ name: 'paginate', rawArguments: '{"query": "x", ' }] }, { text: 'ok' });
    const result = await invoke(
      { config: { atom: 'qwen/qwen-plus', toolBoxes: [toolBoxOf({ name: 'pages', tools: [tool] })] }, prompt: 'go' },
      contextFor(),
    );
    expect(toolMessages(result)[0].content).toMatch(/^the arguments of paginate are not valid JSON/);
    expect(received).toEqual([]);
  });
});

describe('tool contract: two error kinds', () => {
  const genThrowingBox = (ran: string[]) =>
    toolBoxOf({
      name: 'throwing',
      tools: [
        defineTool({
          name: 'lookup',
          description: 'looks a key up',
          input: z.strictObject({ key: z.string() }),
          effect: 'read',
          execute: async ({ key }) => {
            ran.push(`lookup ${key}`);
            throw new BhrainToolError(`no entry named ${key}: list the keys with keys first`);
          },
        }),
        defineTool({
          name: 'commit',
          description: 'commits the store',
          input: z.strictObject({}),
          effect: null,
          execute: async () => {
            ran.push('commit');
            throw new BhrainToolFatalError('the store is corrupt: stop before anything else writes to it');
          },
        }),
      ],
    });

  it('tool contract: a BhrainToolError is a failed result whose output is its message, and the session goes on', async () => {
    const ran: string[] = [];
    standin().script({ toolCalls: [{ name: 'lookup', input: { key: 'k9' } }] }, { text: 'k9 is missing' });
    const result = await invoke({ config: { atom: 'claude/haiku', toolBoxes: [genThrowingBox(ran)] }, prompt: 'go' }, contextFor());
    expect(toolMessages(result)[0]).toMatchObject({ isError: true, content: 'no entry named k9: list the keys with keys first' });
    expect(result).toMatchObject({ termination: 'complete', output: 'k9 is missing' });
  });

  it('tool contract: a BhrainToolFatalError answers its call, skips the calls of the turn not yet run, and ends the session with termination error', async () => {
    const ran: string[] = [];
    const events: BhrainEvent[] = [];
    standin().script(
      {
        toolCalls: [
          { name: 'commit', input: {} },
          { name: 'lookup', input: { key: 'after' } },
        ],
      },
      { text: 'never asked' },
    );
    const result = await invoke(
      { config: { atom: 'claude/haiku', toolBoxes: [genThrowingBox(ran)] }, prompt: 'go' },
      contextFor({ onEvent: (event) => void events.push(event) }),
    );
    expect(result.termination).toBe('error');
    expect(result.error).toBeInstanceOf(BhrainToolFatalError);
    expect(result.error?.message).toBe('the store is corrupt: stop before anything else writes to it');
    // the unknown-effect call runs first; the read after it never runs, and both calls are answered
    expect(ran).toEqual(['commit']);
    const [commit, lookup] = toolMessages(result);
    expect(commit.content).toBe('commit failed, and the session ends here: the store is corrupt: stop before anything else writes to it');
    expect(lookup.content).toBe("lookup was not run: commit ended the session before this call's turn came.");
    expect(standin().requests).toHaveLength(1);
    expect(events.filter((event) => event.type === 'ToolExecutionCompleted')).toHaveLength(2);
  });
});

describe('tool contract: truncated and exitCode on the result, the tool message and ToolExecutionCompleted', () => {
  it('bash results carry exitCode; a cut output carries truncated; both reach the message and the event', async () => {
    const events: BhrainEvent[] = [];
    standin().script(
      {
        toolCalls: [
          { name: 'bash', input: { command: 'exit 3' } },
          { name: 'bash', input: { command: 'seq 1 20000' } },
        ],
      },
      { text: 'done' },
    );
    const result = await invoke(
      {
        config: { atom: 'claude/haiku', toolBoxes: [genBashToolBox({ sandbox: { mode: 'off' } })], limits: { maxToolOutputChars: 2_000 } },
        prompt: 'go',
      },
      contextFor({
        cwd: await tempDir('bhrain-contract-'),
        spillDir: await tempDir('bhrain-contract-'),
        onEvent: (event) => void events.push(event),
      }),
    );
    const [failed, long] = toolMessages(result);
    expect(failed).toMatchObject({ isError: true, exitCode: 3 });
    expect(failed.truncated).toBeUndefined();
    expect(long).toMatchObject({ isError: false, exitCode: 0, truncated: true });
    const completed = events.filter((event) => event.type === 'ToolExecutionCompleted');
    expect(completed.map((event) => [event.exitCode, event.truncated ?? false])).toEqual([
      [3, false],
      [0, true],
    ]);
  });
});

describe('BhrainTool.define / execute / mergeBoxes', () => {
  // docs/design/tools.md#toolboxes
  it('BhrainTool.define is defineTool, and a defined tool carries its definition, effect and paths', () => {
    const tool = BhrainTool.define({
      name: 'touch',
      description: 'creates an empty file',
      input: z.strictObject({ path: z.string() }),
      effect: 'write',
      paths: ({ path }) => [{ path, access: 'write' }],
      execute: async () => ({ success: true, output: 'touched' }),
    });
    expect(tool).toMatchObject({ name: 'touch', effect: 'write', definition: { name: 'touch', description: 'creates an empty file' } });
    expect(tool.paths({ path: 'a.txt' }, { cwd: '/w' })).toEqual([{ path: 'a.txt', access: 'write' }]);
  });

  it('BhrainTool.execute runs one call through a box, checking its input first, with no permission check', async () => {
    const { tool } = genRecordingTool();
    const box = toolBoxOf({ name: 'pages', tools: [tool] });
    expect(await BhrainTool.execute({ call: { id: 'c1', name: 'paginate', input: { query: 'q' } }, box }, toolContext())).toEqual({
      callId: 'c1',
      success: true,
      output: 'page 1 of q',
    });
    expect(await BhrainTool.execute({ call: { id: 'c2', name: 'nope', input: {} }, box }, toolContext())).toEqual({
      callId: 'c2',
      success: false,
      output: "tool not found: 'nope'. Available tools: paginate. Call one of these instead.",
    });
  });

  it('BhrainTool.mergeBoxes: the definitions of several boxes, one list; a name offered twice fails, naming both boxes', () => {
    const { tool } = genRecordingTool();
    const pages = toolBoxOf({ name: 'pages', tools: [tool] });
    const names = BhrainTool.mergeBoxes({ boxes: [pages, genBashToolBox()] }).map((definition) => definition.name);
    expect(names).toEqual(['paginate', 'bash']);
    expect(() => BhrainTool.mergeBoxes({ boxes: [pages, toolBoxOf({ name: 'again', tools: [tool] })] })).toThrow(
      /conflicting tool name 'paginate': offered by toolbox 'pages' and by toolbox 'again'/,
    );
  });
});

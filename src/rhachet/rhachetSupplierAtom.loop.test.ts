// bhrain.struct.v1 on a rhachet supplier's atom: a `rhachet-brains-*` package written from rhachet's contract, whose atom
// talks to the stand-in over real HTTP; the loop runs it through genBhrain, genBrainRepl and genRhachetBrainRepl
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { genRecordingLog, PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import { tempDir } from '#test-helpers/fs.js';
import { writeRhachetSupplierPackage } from '#test-helpers/rhachetSupplierPackage.js';
import { genBhrain } from '../agent/genBhrain.js';
import { genBrainRepl } from '../agent/repl/genBrainRepl.js';
import type { BhrainToolBox } from '../agent/tool/BhrainToolBox.js';
import { genBashToolBox } from '../agent/toolboxes/bash/genBashToolBox.js';
import { genFilesToolBox } from '../agent/toolboxes/files/genFilesToolBox.js';
import { genRulesGuard } from '../agent/permission/genRulesGuard.js';
import { AuthFailedError, BadRequestError } from '../core/contract/errors.js';
import { genBrainAtomOfRhachet } from '../providers/rhachet/genBrainAtomOfRhachet.js';
import type { RhachetSupplierAtom } from './contract/RhachetSupplierAtom.js';
import { genRhachetBrainRepl } from './genRhachetBrainRepl.js';

const { standin, contextFor } = useStandin();

let atoms: RhachetSupplierAtom[];
beforeAll(async () => {
  const repoDir = tempDir('bhrain-rhachet-consumer-');
  const dir = await writeRhachetSupplierPackage({ repoDir, name: 'standin' });
  process.env.STANDIN_BASE_URL = standin().openaiUrl;
  atoms = createRequire(join(repoDir, 'package.json'))(dir).getBrainAtomsByStandin();
});

/** the standin supplier's tool-using atom, its creds bound as rhachet binds them */
const bound = (which = 0) =>
  genBrainAtomOfRhachet({
    atom: atoms[which],
    context: { 'brain.supplier.standin': { creds: async () => ({ STANDIN_API_KEY: 'test' }) } },
  });

/** the tool messages the atom sent back in request n */
const toolsSent = (n: number): Array<{ tool_call_id: string; content: string }> =>
  standin().requests[n].body.messages.filter((message: { role: string }) => message.role === 'tool');

const echoBox = (execute: BhrainToolBox['execute']): BhrainToolBox => ({
  name: 'echo',
  definitions: [
    { name: 'echo', description: 'echoes', inputSchema: { type: 'object', properties: { say: { type: 'string' } }, required: ['say'] } },
  ],
  execute,
});

describe('rhachet supplier atoms: bhrain.struct.v1 runs on them', () => {
  it('rhachet supplier atoms: a multi-step bash and edit task runs; tools go as plugs, results as executions, each turn on the returned episode, cost from the IsoPrice metrics', async () => {
    const cwd = tempDir('bhrain-rhachet-loop-');
    standin().script(
      { toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'one\n' } }] },
      { toolCalls: [{ name: 'edit', input: { path: 'a.txt', old_string: 'one', new_string: 'two' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt' } }] },
      { text: 'a.txt says two' },
    );
    const run = await genBhrain({ atom: bound(), toolBoxes: [genFilesToolBox(), genBashToolBox()] }).invoke(
      { prompt: 'make a.txt say two' },
      contextFor({ cwd }),
    );
    expect(run.termination).toBe('complete');
    expect(run.output).toBe('a.txt says two');
    expect(await readFile(join(cwd, 'a.txt'), 'utf8')).toBe('two\n');
    const first = standin().requests[0].body;
    expect(first.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual([
      'read',
      'write',
      'edit',
      'glob',
      'grep',
      'bash',
    ]);
    expect(first.messages[0].role).toBe('system');
    // each later turn continues the episode: the prior turns come from the atom's own episode, and the results as tool messages
    expect(standin().requests[3].body.messages.filter((message: { role: string }) => message.role === 'assistant')).toHaveLength(3);
    expect(toolsSent(3).map((message) => JSON.parse(message.content))).toHaveLength(3);
    expect(JSON.parse(toolsSent(3)[2].content)).toContain('two');
    expect(run.tokens.input).toBeGreaterThan(0);
    expect(run.cash?.total).toBeCloseTo(run.tokens.input * 0.000003 + run.tokens.output * 0.000015, 9);
  });

  it('rhachet supplier atoms: a denial and invalid arguments go back as error:constraint, a crash as error:malfunction, an unknown tool too; parallel calls each get one', async () => {
    standin().script(
      {
        text: 'let me try',
        toolCalls: [
          { name: 'echo', input: { say: 'hi' } },
          { name: 'echo', input: {} },
          { name: 'nope', input: {} },
          { name: ' echo ', input: { say: 'padded' } },
        ],
      },
      { toolCalls: [{ name: 'bash', input: { command: 'rm -rf /tmp/x' } }] },
      { text: 'done' },
    );
    let thrown = 0;
    const box = echoBox(async ({ call }) => {
      if (call.input.say === 'hi' && thrown++ === 0) throw new Error('disk on fire');
      return { callId: call.id, success: true, output: `said ${String(call.input.say)}` };
    });
    const run = await genBhrain({
      atom: bound(),
      toolBoxes: [box, genBashToolBox()],
      permissionGuard: genRulesGuard({ allow: ['echo', 'bash'], deny: ['bash(rm:*)'] }, 'rules'),
    }).invoke({ prompt: 'go' }, contextFor({ cwd: tempDir('bhrain-rhachet-edges-') }));
    expect(run.output).toBe('done');
    const signals = toolsSent(1).map((message) => JSON.parse(message.content));
    expect(signals[0]).toMatchObject({ error: { name: 'MalfunctionError' }, signal: 'error:malfunction' });
    expect(signals[1]).toMatchObject({ error: { name: 'ConstraintError' }, signal: 'error:constraint' });
    expect(signals[2]).toMatchObject({
      error: { name: 'ConstraintError', message: expect.stringMatching(/nope/) },
      signal: 'error:constraint',
    });
    expect(signals[3]).toBe('said padded');
    expect(JSON.parse(toolsSent(2)[4].content)).toMatchObject({ signal: 'error:constraint' });
    expect(run.toolCalls.denied).toBe(1);
  });

  it('rhachet supplier atoms: genBrainRepl and genRhachetBrainRepl run over one, and our own episode and series come out', async () => {
    standin().script({ text: 'noted: heron' }, { text: 'heron' }, { text: 'heron again' });
    const repl = genBrainRepl({ atom: bound() });
    const first = await repl.ask({ say: 'remember heron' }, contextFor());
    const second = await repl.ask({ say: 'the codename?', on: { series: first.series } }, contextFor());
    expect(second.output).toBe('heron');
    expect(second.series.episodes.at(-1)!.exchanges.map((exchange) => exchange.input)).toEqual(['remember heron', 'the codename?']);
    // a history from elsewhere starts a new rhachet episode from its transcript
    expect(JSON.stringify(standin().requests[1].body.messages)).toContain('remember heron');
    const rhachetRepl = genRhachetBrainRepl({ atom: bound() });
    const out = await rhachetRepl.act({ role: {}, prompt: 'again?', schema: { output: z.string() } }, contextFor());
    expect(out.output).toBe('heron again');
    expect(out.series.episodes).toHaveLength(1);
  });

  it('rhachet supplier atoms: an atom without tool use runs text-only, with a warning', async () => {
    standin().script({ text: 'plain' });
    const { log, lines } = genRecordingLog();
    const run = await genBhrain({ atom: bound(1), toolBoxes: [genBashToolBox()] }).invoke({ prompt: 'hi' }, contextFor({ log }));
    expect(run.output).toBe('plain');
    expect(standin().requests[0].body.tools).toBeUndefined();
    expect(lines.some((line) => line.level === 'warn' && /uses no tools/.test(line.message))).toBe(true);
  });

  it('rhachet supplier atoms: an ask that rejects is classified (no key: AuthFailedError); something that is neither kind of atom is a BadRequestError', async () => {
    const run = await genBhrain({ atom: atoms[0], toolBoxes: [] }).invoke({ prompt: 'hi' }, contextFor());
    expect(run.error).toBeInstanceOf(AuthFailedError);
    expect(run.error!.message).toMatch(/STANDIN_API_KEY required/);
    expect(() => genBhrain({ atom: { repo: 'x', slug: 'x/y' } as never })).toThrow(BadRequestError);
    expect(() => genBhrain({ atom: { repo: 'x', slug: 'x/y' } as never })).toThrow(/needs ask \(a function\)/);
    expect(() => genBrainRepl({ atom: { ...atoms[0], act: async () => null } as never })).toThrow(/rhachet BrainRepl/);
    expect(standin().requests).toHaveLength(0);
  });
});

describe('rhachet supplier atoms: the loop stops mid-task as on our atoms', () => {
  it('rhachet supplier atoms: max iterations and a token budget stop between calls, saying which', async () => {
    const call = { text: 'working', toolCalls: [{ name: 'echo', input: { say: 'x' } }] };
    standin().script(call, call, call);
    const box = echoBox(async ({ call: asked }) => ({ callId: asked.id, success: true, output: 'ok' }));
    const capped = await genBhrain({ atom: bound(), toolBoxes: [box], maxIterations: 2 }).invoke({ prompt: 'go' }, contextFor());
    expect(capped).toMatchObject({ termination: 'max-iterations', iterations: 2, output: expect.stringContaining('(maxIterations)') });
    standin().reset();
    standin().script(call, call);
    const spent = await genBhrain({ atom: bound(), toolBoxes: [box], limits: { maxTokens: 5 } }).invoke({ prompt: 'go' }, contextFor());
    expect(spent).toMatchObject({ termination: 'budget', iterations: 1, budgetReached: { limit: 'maxTokens' } });
  });
});

describe.each(PROTOCOL_SLUGS)('a padded tool name on $slug', ({ slug }) => {
  it("' echo ' calls the tool echo, in every protocol: never answered 'tool not found'", async () => {
    standin().script({ toolCalls: [{ name: ' echo ', input: { say: 'padded' } }] }, { text: 'done' });
    const run = await genBhrain({
      atom: slug,
      toolBoxes: [echoBox(async ({ call }) => ({ callId: call.id, success: true, output: `said ${String(call.input.say)}` }))],
    }).invoke({ prompt: 'go' }, contextFor());
    expect(run.toolCalls).toMatchObject({ made: 1, failed: 0 });
    expect(run.transcript.find((message) => message.role === 'tool')).toMatchObject({ toolName: 'echo', content: 'said padded' });
  });
});

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { StandinRequest, StandinTurn } from '#standin/types.js';
import { AbortedError, BadRequestError } from '../../core/contract/errors.js';
import { hashBhrainConfig } from '../config/BhrainConfig.js';
import type { BhrainSession, BhrainSessionResult } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain, invoke } from '../genBhrain.js';
import { sumTokens } from '../session/checkBudget.js';
import type { BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { systemOf, toolNamesOf } from '#standin/requestParts.js';
import { toolResults } from '#test-helpers/transcript.js';
import { tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();

/** everything a request said apart from its system prompt and tools: the messages */
const messagesOf = (request: StandinRequest): string =>
  JSON.stringify(
    request.protocol === 'anthropic'
      ? request.body.messages
      : request.body.messages.filter((message: { role: string }) => message.role !== 'system'),
  );

/** the built-in subagent prompts all say this; the parent's never does */
const CHILD_MARK = 'subagent: another agent delegated';
const isChild = (request: StandinRequest) => systemOf(request).includes(CHILD_MARK);

/** the tokens the stand-in reported for one request, in the budget's sense: input, output and both cache parts */
const tokensOf = (request: StandinRequest): number => {
  const usage = request.usage!;
  return usage.input + usage.output + usage.cacheWrite + (request.protocol === 'openai' ? 0 : usage.cacheRead);
};

/** a real workspace with a file the explore child can find */
const genWorkspace = async () => {
  const cwd = tempDir('bhrain-subagents-');
  await writeFile(join(cwd, 'config.ts'), 'export const loadConfig = () => ({});\n');
  return cwd;
};

/** a task call, as the parent's model makes it */
const taskCall = (subagent_type: string, prompt: string, description = 'find the loader') => ({
  name: 'task',
  input: { description, prompt, subagent_type },
});

describe.each(PROTOCOL_SLUGS)('subagent isolation on $slug', ({ slug }) => {
  // docs/design/loop.md#subagents
  it("the explore child starts with a fresh context (the task prompt and the project instructions, none of the parent messages), is offered only read-only tools, and its answer is the parent's tool result while its transcript stays out of the parent's context", async () => {
    const cwd = await genWorkspace();
    standin().respond = (request): StandinTurn => {
      if (isChild(request))
        return messagesOf(request).includes('loadConfig = ')
          ? { text: 'CHILD-ANSWER: loadConfig is defined in config.ts line 1' }
          : { toolCalls: [{ name: 'grep', input: { pattern: 'CHILD-ONLY-PATTERN|loadConfig' } }] };
      return messagesOf(request).includes('CHILD-ANSWER')
        ? { text: 'PARENT-DONE: it is in config.ts' }
        : { toolCalls: [taskCall('explore', 'TASK-PROMPT: find where loadConfig is defined; return the file and line')] };
    };
    const events: BhrainEvent[] = [];
    const brain = genBhrain({ atom: slug, subagents: true, instructions: 'RULE-PROJECT: answer in one line' });
    const result = await brain.invoke(
      {
        prompt: 'PARENT-PROMPT: where is the config loader?',
        history: [
          { role: 'user', content: 'EARLIER-PARENT-MESSAGE: my password hint is blue' },
          { role: 'assistant', content: 'EARLIER-PARENT-ANSWER: noted', toolCalls: [] },
        ],
      },
      contextFor({ cwd, onEvent: (event) => events.push(event) }),
    );

    expect(result.termination).toBe('complete');
    expect(result.output).toBe('PARENT-DONE: it is in config.ts');
    const childRequests = standin().requests.filter(isChild);
    const parentRequests = standin().requests.filter((request) => !isChild(request));
    expect(childRequests).toHaveLength(2);
    expect(parentRequests).toHaveLength(2);
    // the parent offers the task tool; its description lists the types
    expect(toolNamesOf(parentRequests[0])).toContain('task');
    expect(JSON.stringify(parentRequests[0].body.tools)).toContain('- explore:');
    for (const request of childRequests) {
      expect(messagesOf(request)).toContain('TASK-PROMPT: find where loadConfig is defined');
      expect(messagesOf(request)).not.toContain('EARLIER-PARENT');
      expect(messagesOf(request)).not.toContain('PARENT-PROMPT');
      expect(systemOf(request)).toContain('You are an explore subagent');
      expect(systemOf(request)).toContain('RULE-PROJECT: answer in one line');
      // read-only: no write, edit, bash, nor task
      expect(toolNamesOf(request).sort()).toEqual(['glob', 'grep', 'read', 'websearch']);
    }
    // the first child request holds exactly one message: the task prompt
    expect(childRequests[0].body.messages.filter((message: { role: string }) => message.role !== 'system')).toHaveLength(1);

    // the parent reads the child's answer as the task call's result, and nothing of the child's steps
    const [taskResult] = toolResults(result.transcript);
    expect(taskResult).toMatchObject({
      toolName: 'task',
      isError: false,
      content: 'CHILD-ANSWER: loadConfig is defined in config.ts line 1',
    });
    expect(messagesOf(parentRequests[1])).toContain('CHILD-ANSWER: loadConfig is defined in config.ts line 1');
    expect(parentRequests.map(messagesOf).join('')).not.toContain('CHILD-ONLY-PATTERN');
    expect(JSON.stringify(result.transcript)).not.toContain('CHILD-ONLY-PATTERN');

    // the child's transcript is kept in the parent's result, not in its context
    expect(result.subagents).toHaveLength(1);
    const [child] = result.subagents;
    // docs/design/loop.md#subagents: uuid is the subagent's (its own session's, as its events say), sessionUuid the session that spawned it
    expect(child).toMatchObject({
      sessionUuid: result.sessionUuid,
      parentSessionUuid: result.sessionUuid,
      type: 'explore',
      description: 'find the loader',
      status: 'COMPLETED',
      termination: 'complete',
      output: 'CHILD-ANSWER: loadConfig is defined in config.ts line 1',
      iterations: 2,
      atom: slug,
    });
    expect(JSON.stringify(child.transcript)).toContain('CHILD-ONLY-PATTERN');
    expect(toolResults(child.transcript)[0].content).toContain('config.ts');

    // the parent's stream shows the child's start and end, never the child's own events
    const started = events.find((event) => event.type === 'SubagentStarted');
    const completed = events.find((event) => event.type === 'SubagentCompleted');
    expect(started).toMatchObject({
      sessionUuid: child.uuid,
      parentSessionUuid: result.sessionUuid,
      subagentType: 'explore',
      atom: slug,
    });
    expect(completed).toMatchObject({
      sessionUuid: child.uuid,
      parentSessionUuid: result.sessionUuid,
      subagentType: 'explore',
      status: 'COMPLETED',
      metrics: { iterations: 2, tokens: child.tokens, cash: child.cash, elapsedMs: child.elapsedMs },
    });
    expect(events.filter((event) => event.sessionUuid === child.uuid).map((event) => event.type)).toEqual([
      'SubagentStarted',
      'SubagentCompleted',
    ]);
    const types = events.map((event) => event.type);
    expect(types.indexOf('ToolCallStarted')).toBeLessThan(types.indexOf('SubagentStarted'));
    expect(types.indexOf('SubagentCompleted')).toBeLessThan(types.indexOf('ToolExecutionCompleted'));
  });

  it("a child is never looser than its parent: the parent's guard judges every child call too", async () => {
    const cwd = await genWorkspace();
    const denyGrep: BhrainPermissionGuard = {
      name: 'no-grep',
      check: ({ call }) =>
        call.name === 'grep'
          ? { decision: 'deny', reason: 'grep is not allowed here' }
          : call.name === 'glob'
            ? { decision: 'prompt', reason: 'glob needs a yes' }
            : { decision: 'allow' },
    };
    const asked: string[] = [];
    const prompter: BhrainPrompter = async ({ call, reason }) => (asked.push(`${call.name}: ${reason}`), true);
    standin().respond = (request): StandinTurn => {
      if (isChild(request))
        return messagesOf(request).includes('permission denied')
          ? { text: 'CHILD-ANSWER: grep was denied' }
          : {
              toolCalls: [
                { name: 'grep', input: { pattern: 'loadConfig' } },
                { name: 'glob', input: { pattern: '*.ts' } },
              ],
            };
      return messagesOf(request).includes('CHILD-ANSWER') ? { text: 'done' } : { toolCalls: [taskCall('explore', 'grep for loadConfig')] };
    };
    const result = await invoke(
      { config: { atom: slug, subagents: true, permissionGuard: denyGrep }, prompt: 'find it' },
      contextFor({ cwd, prompter }),
    );

    expect(result.termination).toBe('complete');
    const [denied, globbed] = toolResults(result.subagents[0].transcript);
    expect(denied.isError).toBe(true);
    expect(denied.content).toContain('grep is not allowed here');
    // the parent's prompts reach the parent's prompter, for the child's calls too
    expect(asked).toEqual(['glob: glob needs a yes']);
    expect(globbed).toMatchObject({ toolName: 'glob', isError: false });
    expect(globbed.content).toContain('config.ts');
  });
});

describe.each(PROTOCOL_SLUGS)('telemetry: context.onSubagentEvent on $slug', ({ slug }) => {
  it("telemetry: context.onSubagentEvent gets the child's own events (its session, model calls with their generation, tool calls), which onEvent never does; a listener that throws stops nothing", async () => {
    const cwd = await genWorkspace();
    standin().respond = (request) => {
      if (isChild(request))
        return messagesOf(request).includes('loadConfig = ')
          ? { text: 'CHILD-ANSWER: config.ts' }
          : { toolCalls: [{ name: 'grep', input: { pattern: 'loadConfig' } }] };
      return messagesOf(request).includes('CHILD-ANSWER')
        ? { text: 'PARENT-DONE' }
        : { toolCalls: [taskCall('explore', 'find loadConfig')] };
    };
    const events: BhrainEvent[] = [];
    const subagentEvents: BhrainEvent[] = [];
    const result = await genBhrain({ atom: slug, subagents: true }).invoke(
      { prompt: 'where is the config loader?' },
      contextFor({ cwd, onEvent: (event) => events.push(event), onSubagentEvent: (event) => subagentEvents.push(event) }),
    );
    expect(result.output).toBe('PARENT-DONE');
    const [child] = result.subagents;
    expect(subagentEvents.map((event) => event.type)).toEqual([
      'SessionStarted',
      'ToolCallStarted',
      'ToolExecutionCompleted',
      'IterationCompleted',
      'IterationCompleted',
      'SessionCompleted',
    ]);
    expect(new Set(subagentEvents.map((event) => event.sessionUuid))).toEqual(new Set([child.uuid]));
    expect(events.filter((event) => event.sessionUuid === child.uuid).map((event) => event.type)).toEqual([
      'SubagentStarted',
      'SubagentCompleted',
    ]);
    // every model call says which model answered, when it was sent, how long it took, its attempts and its cost
    for (const event of [...events, ...subagentEvents])
      if (event.type === 'IterationCompleted')
        expect(event.generation).toEqual({
          model: expect.any(String),
          requestedAt: expect.any(String),
          elapsedMs: expect.any(Number),
          attempts: 1,
          costUsd: expect.any(Number),
          stopReason: event.hadToolCalls ? 'tool_calls' : 'end',
        });

    // a listener that throws is logged, and the child and its parent carry on
    standin().reset();
    standin().respond = (request) =>
      isChild(request)
        ? { text: 'CHILD-ANSWER: config.ts' }
        : messagesOf(request).includes('CHILD-ANSWER')
          ? { text: 'PARENT-DONE' }
          : { toolCalls: [taskCall('explore', 'find loadConfig')] };
    const errors: string[] = [];
    const again = await genBhrain({ atom: slug, subagents: true }).invoke(
      { prompt: 'where is the config loader?' },
      contextFor({
        cwd,
        log: { debug: () => {}, info: () => {}, warn: () => {}, error: (message) => errors.push(message) },
        onSubagentEvent: () => {
          throw new Error('listener broke');
        },
      }),
    );
    expect({ output: again.output, child: again.subagents[0].status }).toEqual({ output: 'PARENT-DONE', child: 'COMPLETED' });
    expect(errors.some((message) => message.includes('listener broke'))).toBe(true);
  });
});

describe.each(PROTOCOL_SLUGS)('subagents running, failing and spending on $slug', ({ slug }) => {
  // docs/design/loop.md#subagents
  it('two task calls in one turn run their children at the same time', async () => {
    const cwd = await genWorkspace();
    standin().respond = (request): StandinTurn => {
      if (isChild(request)) {
        const which = messagesOf(request).includes('TASK-A') ? 'A' : 'B';
        // each child's first request is slow: run one after the other, the second child would start after the first ended
        return messagesOf(request).includes('config.ts')
          ? { text: `CHILD-${which}-ANSWER` }
          : { delayMs: 300, then: { toolCalls: [{ name: 'glob', input: { pattern: '*.ts' } }] } };
      }
      return messagesOf(request).includes('CHILD-A-ANSWER')
        ? { text: 'both done' }
        : { toolCalls: [taskCall('explore', 'TASK-A: list the ts files'), taskCall('explore', 'TASK-B: list the ts files too')] };
    };
    const result = await invoke({ config: { atom: slug, subagents: true }, prompt: 'two searches' }, contextFor({ cwd }));

    expect(result.termination).toBe('complete');
    const children = standin()
      .requests.filter(isChild)
      .map((request) => ({ which: messagesOf(request).includes('TASK-A') ? 'A' : 'B', first: !messagesOf(request).includes('config.ts') }));
    // both children asked their first question before either asked its second: they ran concurrently
    expect(children.slice(0, 2).every((child) => child.first)).toBe(true);
    expect(
      children
        .slice(0, 2)
        .map((child) => child.which)
        .sort(),
    ).toEqual(['A', 'B']);
    expect(children.slice(2).every((child) => !child.first)).toBe(true);
    // results are in the model's order, whichever child finished first
    expect(toolResults(result.transcript).map((message) => message.content)).toEqual(['CHILD-A-ANSWER', 'CHILD-B-ANSWER']);
    expect(result.subagents.map((child) => child.status)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('a child whose model fails is an error result for the parent, which carries on', async () => {
    const cwd = await genWorkspace();
    standin().respond = (request): StandinTurn => {
      if (isChild(request)) return { error: { status: 400, message: 'CHILD-MODEL-BROKE' } };
      return messagesOf(request).includes('explore subagent failed')
        ? { text: 'PARENT-RECOVERED' }
        : { toolCalls: [taskCall('explore', 'look')] };
    };
    const events: BhrainEvent[] = [];
    const result = await invoke(
      { config: { atom: slug, subagents: true }, prompt: 'go' },
      contextFor({ cwd, onEvent: (event) => events.push(event) }),
    );

    expect(result.termination).toBe('complete');
    expect(result.output).toBe('PARENT-RECOVERED');
    expect(result.session.status).toBe('COMPLETED');
    const [taskResult] = toolResults(result.transcript);
    expect(taskResult.isError).toBe(true);
    expect(taskResult.content).toContain('the explore subagent failed');
    expect(taskResult.content).toContain('CHILD-MODEL-BROKE');
    expect(result.subagents[0]).toMatchObject({ status: 'FAILED', termination: 'error' });
    expect(events.find((event) => event.type === 'SubagentCompleted')).toMatchObject({ status: 'FAILED', termination: 'error' });
    expect(result.toolCalls).toMatchObject({ made: 1, failed: 1, denied: 0 });
  });

  it("the child's tokens and cost roll up into the parent's result and session, and the token budget counts them", async () => {
    const cwd = await genWorkspace();
    standin().respond = (request): StandinTurn => {
      if (isChild(request))
        return messagesOf(request).includes('config.ts')
          ? { text: 'CHILD-ANSWER' }
          : { toolCalls: [{ name: 'glob', input: { pattern: '*' } }] };
      return messagesOf(request).includes('CHILD-ANSWER') ? { text: 'done' } : { toolCalls: [taskCall('explore', 'look')] };
    };
    const result = await invoke({ config: { atom: slug, subagents: true }, prompt: 'go' }, contextFor({ cwd }));

    const all = standin().requests.reduce((sum, request) => sum + tokensOf(request), 0);
    const childOnly = standin()
      .requests.filter(isChild)
      .reduce((sum, request) => sum + tokensOf(request), 0);
    expect(childOnly).toBeGreaterThan(0);
    expect(sumTokens(result.subagents[0].tokens)).toBe(childOnly);
    expect(sumTokens(result.tokens)).toBe(all);
    expect(result.cash!.total).toBeGreaterThan(result.subagents[0].cash!.total);
    expect(result.session.tokenUsage).toMatchObject({ inputTokens: result.tokens.input, outputTokens: result.tokens.output });
    // iterations are each session's own: the parent's two, the child's two
    expect(result.iterations).toBe(2);
    expect(result.subagents[0].iterations).toBe(2);

    // a child that never stops is stopped by the parent's token budget, and so is the parent
    standin().reset();
    let n = 0;
    standin().respond = (request): StandinTurn =>
      isChild(request)
        ? { toolCalls: [{ name: 'glob', input: { pattern: `*${++n}*` } }] }
        : { toolCalls: [taskCall('explore', 'look forever')] };
    const cap = 15_000;
    const stopped = await invoke(
      { config: { atom: slug, subagents: true, maxIterations: 1_000, limits: { maxTokens: cap } }, prompt: 'go' },
      contextFor({ cwd }),
    );
    expect(stopped.termination).toBe('budget');
    expect(stopped.session.status).toBe('TERMINATED');
    expect(stopped.subagents[0]).toMatchObject({ status: 'FAILED', termination: 'budget' });
    // the parent sent one request; the child ran until the shared cap, checked before each request
    expect(standin().requests.filter((request) => !isChild(request))).toHaveLength(1);
    const sums = standin().requests.reduce<number[]>((acc, request) => [...acc, (acc.at(-1) ?? 0) + tokensOf(request)], []);
    expect(sums.at(-2)!).toBeLessThan(cap);
    expect(sums.at(-1)!).toBeGreaterThanOrEqual(cap);
    expect(stopped.budgetReached).toEqual({ limit: 'maxTokens', spent: sums.at(-1), cap });
    expect(toolResults(stopped.transcript)[0].content).toContain('the token budget was reached');
  });
});

describe.each(PROTOCOL_SLUGS)('custom subagent types on $slug', ({ slug, protocol }) => {
  // docs/design/loop.md#subagents
  it("a library user's subagent runs on another atom, with its own prompt and toolboxes", async () => {
    const other = PROTOCOL_SLUGS.find((candidate) => candidate.protocol !== protocol)!;
    const lookup: BhrainToolBox = {
      name: 'lookup',
      definitions: [
        { name: 'lookup', description: 'looks a word up', inputSchema: { type: 'object', properties: { word: { type: 'string' } } } },
      ],
      execute: async ({ call }) => ({ callId: call.id, success: true, output: `LOOKED-UP ${call.input.word}` }),
    };
    standin().respond = (request): StandinTurn => {
      if (systemOf(request).includes('CHEAP-SCOUT-PROMPT'))
        return messagesOf(request).includes('LOOKED-UP')
          ? { text: 'SCOUT-ANSWER' }
          : { toolCalls: [{ name: 'lookup', input: { word: 'bhrain' } }] };
      return messagesOf(request).includes('SCOUT-ANSWER') ? { text: 'done' } : { toolCalls: [taskCall('scout', 'look bhrain up')] };
    };
    const result = await invoke(
      {
        config: {
          atom: slug,
          subagents: {
            types: [
              {
                name: 'scout',
                description: 'looks words up cheaply',
                systemPrompt: 'CHEAP-SCOUT-PROMPT: look it up',
                toolBoxes: [lookup],
                atom: other.slug,
              },
            ],
          },
        },
        prompt: 'go',
      },
      contextFor({ cwd: await genWorkspace() }),
    );

    expect(result.termination).toBe('complete');
    const scoutRequests = standin().requests.filter((request) => systemOf(request).includes('CHEAP-SCOUT-PROMPT'));
    const parentRequests = standin().requests.filter((request) => !systemOf(request).includes('CHEAP-SCOUT-PROMPT'));
    expect(scoutRequests).toHaveLength(2);
    // the child's requests arrive on the other atom's protocol; the parent's on its own
    expect(scoutRequests.every((request) => request.protocol === other.protocol)).toBe(true);
    expect(parentRequests.every((request) => request.protocol === protocol)).toBe(true);
    expect(toolNamesOf(scoutRequests[0])).toEqual(['lookup']);
    expect(JSON.stringify(parentRequests[0].body.tools)).toContain('- scout: looks words up cheaply');
    expect(result.subagents[0]).toMatchObject({ type: 'scout', atom: other.slug, status: 'COMPLETED', output: 'SCOUT-ANSWER' });
  });
});

describe.each(PROTOCOL_SLUGS)('subagent recursion on $slug', ({ slug }) => {
  // docs/design/loop.md#subagents
  it('at the default depth limit of 1 a child is not offered task, and its call to task is a failed result', async () => {
    const cwd = await genWorkspace();
    standin().respond = (request): StandinTurn => {
      if (isChild(request))
        return messagesOf(request).includes('depth limit')
          ? { text: 'CHILD-ANSWER: I did it myself' }
          : { toolCalls: [taskCall('explore', 'GRANDCHILD-TASK: look around')] };
      return messagesOf(request).includes('CHILD-ANSWER')
        ? { text: 'done' }
        : { toolCalls: [taskCall('general-purpose', 'CHILD-TASK: delegate further')] };
    };
    const result = await invoke({ config: { atom: slug, subagents: true }, prompt: 'go' }, contextFor({ cwd }));

    expect(result.termination).toBe('complete');
    const childRequests = standin().requests.filter(isChild);
    expect(childRequests.every((request) => systemOf(request).includes('You are a general-purpose subagent'))).toBe(true);
    // general-purpose gets the parent's tools, minus task at the limit
    expect(toolNamesOf(childRequests[0]).sort()).toEqual(['bash', 'edit', 'glob', 'grep', 'read', 'websearch', 'write']);
    expect(
      standin().requests.some(
        (request) => messagesOf(request).includes('GRANDCHILD-TASK') && isChild(request) && !messagesOf(request).includes('CHILD-TASK'),
      ),
    ).toBe(false);
    expect(result.subagents).toHaveLength(1);
    const [refused] = toolResults(result.subagents[0].transcript);
    expect(refused).toMatchObject({ toolName: 'task', isError: true });
    expect(refused.content).toContain('cannot spawn subagents of its own');
    expect(refused.content).toContain('subagents.maxDepth = 1');
  });

  it('with subagents.maxDepth 2 a child spawns a grandchild, whose record names the child as its parent', async () => {
    const cwd = await genWorkspace();
    standin().respond = (request): StandinTurn => {
      const said = messagesOf(request);
      if (systemOf(request).includes('You are an explore subagent')) return { text: 'GRANDCHILD-ANSWER' };
      if (isChild(request))
        return said.includes('GRANDCHILD-ANSWER') ? { text: 'CHILD-ANSWER' } : { toolCalls: [taskCall('explore', 'GRANDCHILD-TASK')] };
      return said.includes('CHILD-ANSWER') ? { text: 'done' } : { toolCalls: [taskCall('general-purpose', 'CHILD-TASK')] };
    };
    const events: BhrainEvent[] = [];
    const subagentEvents: BhrainEvent[] = [];
    const result = await invoke(
      { config: { atom: slug, subagents: { maxDepth: 2 } }, prompt: 'go' },
      contextFor({ cwd, onEvent: (event) => events.push(event), onSubagentEvent: (event) => subagentEvents.push(event) }),
    );

    expect(result.termination).toBe('complete');
    expect(toolNamesOf(standin().requests.find((request) => systemOf(request).includes('general-purpose subagent'))!)).toContain('task');
    // explore is read-only: it never gets the task tool, whatever the depth
    expect(toolNamesOf(standin().requests.find((request) => systemOf(request).includes('explore subagent'))!)).not.toContain('task');
    const [grandchild, child] = result.subagents;
    expect(child).toMatchObject({ type: 'general-purpose', sessionUuid: result.sessionUuid, output: 'CHILD-ANSWER' });
    expect(grandchild).toMatchObject({
      type: 'explore',
      sessionUuid: child.uuid,
      parentSessionUuid: child.uuid,
      output: 'GRANDCHILD-ANSWER',
    });
    // the grandchild's start and end reach the root's subscribers
    expect(events.filter((event) => event.type === 'SubagentStarted').map((event) => event.sessionUuid)).toEqual([
      child.uuid,
      grandchild.uuid,
    ]);
    // telemetry: the child's and the grandchild's own events reach onSubagentEvent, each session's start before its end
    const sessionsOf = (type: string) => subagentEvents.filter((event) => event.type === type).map((event) => event.sessionUuid);
    expect(sessionsOf('SessionStarted')).toEqual([child.uuid, grandchild.uuid]);
    expect(sessionsOf('SessionCompleted')).toEqual([grandchild.uuid, child.uuid]);
    expect(subagentEvents.some((event) => event.type === 'SubagentStarted' || event.type === 'SubagentCompleted')).toBe(false);
    // the child's spend includes the grandchild's, and the root's includes both
    expect(sumTokens(result.tokens)).toBe(standin().requests.reduce((sum, request) => sum + tokensOf(request), 0));
  });
});

describe.each(PROTOCOL_SLUGS)('the session entity on $slug', ({ slug }) => {
  // docs/design/loop.md#the-session-entity
  it('a spawned subagent is a live entity, RUNNING first in brain.session.subagents (uuid, sessionUuid = the owning session, type, prompt), then COMPLETED with its result', async () => {
    const cwd = await genWorkspace();
    const brain = genBhrain({ atom: slug, subagents: true });
    const seen: BhrainSession[] = [];
    standin().respond = (request): StandinTurn => {
      if (isChild(request)) return { text: 'CHILD-ANSWER' };
      return messagesOf(request).includes('CHILD-ANSWER') ? { text: 'done' } : { toolCalls: [taskCall('explore', 'LOOK-AROUND')] };
    };
    const onEvent = (event: BhrainEvent) => void (event.type === 'SubagentStarted' && seen.push(brain.session!));
    const result = await brain.invoke({ prompt: 'delegate' }, contextFor({ cwd, onEvent }));

    const [running] = seen[0].subagents;
    expect(running).toMatchObject({
      sessionUuid: result.sessionUuid,
      type: 'explore',
      prompt: 'LOOK-AROUND',
      status: 'RUNNING',
      termination: null,
    });
    expect(running.result).toBeUndefined();
    expect(Object.isFrozen(running)).toBe(true);
    const [ended] = result.session.subagents;
    expect(ended).toMatchObject({ uuid: running.uuid, sessionUuid: result.sessionUuid, status: 'COMPLETED', result: 'CHILD-ANSWER' });
    expect(result.subagents).toEqual([ended]);
    // the entity handed out while it ran is unchanged: a new value came after it
    expect(running.status).toBe('RUNNING');
  });

  it('across every value the live session takes, uuid, configUuid and startedAt stay; status, iterationCount, tokenUsage and endedAt change (a subagent: status and result)', async () => {
    const cwd = await genWorkspace();
    const brain = genBhrain({ atom: slug, subagents: true });
    const seen: BhrainSession[] = [];
    standin().respond = (request): StandinTurn => {
      if (isChild(request)) return { text: 'CHILD-ANSWER' };
      return messagesOf(request).includes('CHILD-ANSWER') ? { text: 'done' } : { toolCalls: [taskCall('explore', 'LOOK-AROUND')] };
    };
    const onEvent = () => void (brain.session && seen.push(brain.session));
    const result = await brain.invoke({ prompt: 'delegate' }, contextFor({ cwd, onEvent }));
    seen.push(result.session);

    const fixed = (session: BhrainSession) => ({ uuid: session.uuid, configUuid: session.configUuid, startedAt: session.startedAt });
    expect(new Set(seen.map((session) => JSON.stringify(fixed(session)))).size).toBe(1);
    const changed = (key: keyof BhrainSession) => new Set(seen.map((session) => JSON.stringify(session[key]))).size > 1;
    expect(['status', 'iterationCount', 'tokenUsage', 'endedAt'].filter((key) => changed(key as keyof BhrainSession))).toEqual([
      'status',
      'iterationCount',
      'tokenUsage',
      'endedAt',
    ]);
    const subagentValues = seen.flatMap((session) => session.subagents);
    const [first] = subagentValues;
    for (const value of subagentValues)
      expect({ uuid: value.uuid, sessionUuid: value.sessionUuid, type: value.type, prompt: value.prompt }).toEqual({
        uuid: first.uuid,
        sessionUuid: first.sessionUuid,
        type: first.type,
        prompt: first.prompt,
      });
    expect([...new Set(subagentValues.map((value) => `${value.status}:${value.result ?? ''}`))]).toEqual([
      'RUNNING:',
      'COMPLETED:CHILD-ANSWER',
    ]);
  });

  it('the live brain.session holds the messages (the context so far) and the subagents, not only the result', async () => {
    const seen: BhrainSession[] = [];
    const watch: BhrainToolBox = {
      name: 'watch',
      definitions: [{ name: 'watch', description: 'notes the session', inputSchema: { type: 'object', properties: {} } }],
      execute: async ({ call }) => (seen.push(brain.session!), { callId: call.id, success: true, output: 'watched' }),
    };
    const brain = genBhrain({ atom: slug, toolBoxes: [watch] });
    standin().script({ toolCalls: [{ name: 'watch' }] }, { toolCalls: [{ name: 'watch' }] }, { text: 'done' });
    const result = await brain.invoke({ prompt: 'watch twice' }, contextFor());

    expect(seen.map((session) => session.messages.map((message) => message.role))).toEqual([
      ['user', 'assistant'],
      ['user', 'assistant', 'tool', 'assistant'],
    ]);
    expect(seen.every((session) => session.subagents.length === 0)).toBe(true);
    expect(result.session.messages).toEqual(result.messages);
    expect(brain.session!.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'done' });
  });
});

describe.each(PROTOCOL_SLUGS)('the session status on $slug', ({ slug }) => {
  // docs/design/loop.md#the-session-entity
  it('aborting the parent during a child stops the child too; the child is an error result and the parent ends interrupted', async () => {
    const cwd = await genWorkspace();
    const controller = new AbortController();
    standin().respond = (request): StandinTurn =>
      isChild(request) ? { delayMs: 20_000, then: { text: 'too late' } } : { toolCalls: [taskCall('explore', 'look slowly')] };
    const onEvent = (event: BhrainEvent) => void (event.type === 'SubagentStarted' && setTimeout(() => controller.abort(), 150));
    const startedAt = Date.now();
    const result = await invoke(
      { config: { atom: slug, subagents: true }, prompt: 'go' },
      contextFor({ cwd, onEvent, signal: controller.signal }),
    );

    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(result.termination).toBe('error');
    expect(result.error).toBeInstanceOf(AbortedError);
    expect(result.session.status).toBe('TERMINATED');
    expect(result.subagents[0]).toMatchObject({ status: 'FAILED', termination: 'error' });
    const [taskResult] = toolResults(result.transcript);
    expect(taskResult.isError).toBe(true);
    expect(taskResult.content).toContain('the explore subagent was interrupted before it finished');
    // the parent sent no request after the abort
    expect(standin().requests.filter((request) => !isChild(request))).toHaveLength(1);
  });

  it('the entity is ACTIVE while the session runs (observable as brain.session), COMPLETED at the end, TERMINATED at max-iterations; configUuid hashes the resolved config', async () => {
    const seen: BhrainSession[] = [];
    const watch: BhrainToolBox = {
      name: 'watch',
      definitions: [{ name: 'watch', description: 'notes the session', inputSchema: { type: 'object', properties: {} } }],
      execute: async ({ call }) => (seen.push(brain.session!), { callId: call.id, success: true, output: 'watched' }),
    };
    const brain = genBhrain({ atom: slug, toolBoxes: [watch] });
    expect(brain.session).toBeNull();
    standin().script({ toolCalls: [{ name: 'watch' }] }, { toolCalls: [{ name: 'watch' }] }, { text: 'done' });
    const result = await brain.invoke({ prompt: 'watch twice' }, contextFor());

    expect(seen.map((session) => [session.status, session.iterationCount])).toEqual([
      ['ACTIVE', 0],
      ['ACTIVE', 1],
    ]);
    expect(seen[1].tokenUsage.totalTokens).toBeGreaterThan(0);
    expect(seen[0].endedAt).toBeNull();
    expect(result.session).toMatchObject({
      uuid: result.sessionUuid,
      status: 'COMPLETED',
      iterationCount: 3,
      startedAt: seen[0].startedAt,
    });
    expect(Date.parse(result.session.endedAt!)).toBeGreaterThanOrEqual(Date.parse(result.session.startedAt));
    expect(result.session.tokenUsage).toEqual({
      inputTokens: result.tokens.input,
      outputTokens: result.tokens.output,
      totalTokens: result.tokens.input + result.tokens.output,
      cacheGetTokens: result.tokens.cache.get,
      cacheSetTokens: result.tokens.cache.set,
    });
    expect(brain.session).toEqual(result.session);
    // configUuid: a uuid-shaped hash of the resolved config; equal configs give equal uuids, a changed one another
    expect(result.session.configUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(result.session.configUuid).toBe(hashBhrainConfig(genBhrain({ atom: slug, toolBoxes: [watch] }).config));
    expect(hashBhrainConfig(genBhrain({ atom: slug, toolBoxes: [watch], maxIterations: 7 }).config)).not.toBe(result.session.configUuid);

    standin().reset();
    standin().script({ toolCalls: [{ name: 'watch' }] });
    const capped: BhrainSessionResult = await genBhrain({ atom: slug, toolBoxes: [watch], maxIterations: 1 }).invoke(
      { prompt: 'watch' },
      contextFor(),
    );
    expect(capped.termination).toBe('max-iterations');
    expect(capped.session).toMatchObject({ status: 'TERMINATED', iterationCount: 1 });
    expect(capped.session.endedAt).not.toBeNull();
  });
});

describe('subagents: configuration', () => {
  // docs/design/loop.md#subagents
  it('fails at configuration time on a toolbox tool named task, a bad depth, a duplicate type, or an unpriced subagent atom under a USD cap', () => {
    const named = (name: string): BhrainToolBox => ({
      name: `box-${name}`,
      definitions: [{ name, description: name, inputSchema: { type: 'object' } }],
      execute: async ({ call }) => ({ callId: call.id, success: true, output: '' }),
    });
    expect(() => genBhrain({ atom: 'claude/haiku', subagents: true, toolBoxes: [named('task')] })).toThrow(BadRequestError);
    expect(() => genBhrain({ atom: 'claude/haiku', subagents: true, toolBoxes: [named('task')] })).toThrow(
      /rename that tool, or turn subagents off/,
    );
    // without subagents, a tool named task is the caller's own
    expect(() => genBhrain({ atom: 'claude/haiku', toolBoxes: [named('task')] })).not.toThrow();
    expect(() => genBhrain({ atom: 'claude/haiku', subagents: { maxDepth: 0 } })).toThrow(/subagents.maxDepth must be at least 1/);
    const scout = { name: 'scout', description: 'd', systemPrompt: 'p' };
    expect(() => genBhrain({ atom: 'claude/haiku', subagents: { types: [scout, scout] } })).toThrow(/names 'scout' twice/);
    expect(() =>
      genBhrain({
        atom: 'claude/haiku',
        limits: { maxBudgetUsd: 1 },
        subagents: { types: [{ ...scout, atom: 'qwen/some-self-hosted-model' }] },
      }),
    ).toThrow(/subagent type 'scout'.*is unknown/);
    // off by default; on, the three built-in types at depth 1, and a custom type named like a built-in replaces it
    expect(genBhrain({ atom: 'claude/haiku' }).config.subagents).toBeNull();
    expect(genBhrain({ atom: 'claude/haiku', subagents: true }).config.subagents).toMatchObject({
      maxDepth: 1,
      types: [{ name: 'explore' }, { name: 'plan' }, { name: 'general-purpose' }],
    });
    const replaced = genBhrain({
      atom: 'claude/sonnet',
      subagents: { types: [{ name: 'explore', description: 'cheap explore', systemPrompt: 'p', atom: 'claude/haiku' }] },
    });
    expect(replaced.config.subagents!.types.find((type) => type.name === 'explore')).toMatchObject({
      description: 'cheap explore',
      tools: 'read-only',
      atom: { slug: 'claude/haiku' },
    });
  });
});

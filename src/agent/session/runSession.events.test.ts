import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain, invoke } from '../genBhrain.js';
import type { BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';

const { standin, contextFor } = useStandin();

const SECRET = 'tok-9f8e7d6c5b4a3210';

/** tools that echo their text, fail, or succeed: enough to see every kind of answer */
const probe: BhrainToolBox = {
  name: 'probe',
  definitions: [
    { name: 'echo', description: 'returns its text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    { name: 'fail', description: 'fails', inputSchema: { type: 'object', properties: {} } },
    { name: 'push', description: 'pushes', inputSchema: { type: 'object', properties: {} } },
    { name: 'deploy', description: 'deploys', inputSchema: { type: 'object', properties: {} } },
  ],
  execute: async ({ call }) =>
    call.name === 'fail'
      ? { callId: call.id, success: false, output: 'it failed' }
      : { callId: call.id, success: true, output: call.name === 'echo' ? `echo: ${call.input.text}` : `${call.name} done` },
};

/** deploy is never allowed; push needs the user's approval; everything else runs */
const guard: BhrainPermissionGuard = {
  name: 'deploy-never-push-asks',
  check: ({ call }) =>
    call.name === 'deploy'
      ? { decision: 'deny', reason: 'deploys are not allowed here' }
      : call.name === 'push'
        ? { decision: 'prompt', reason: 'push changes the remote' }
        : { decision: 'allow' },
};

const withoutTimes = (events: BhrainEvent[]) => events.map(({ occurredAt, ...rest }) => (void occurredAt, rest));

describe.each(PROTOCOL_SLUGS)('events on $slug: order and counts', ({ slug }) => {
  it('events: a session emits SessionStarted, ToolCallStarted, ToolExecutionCompleted, IterationCompleted and SessionCompleted, in order, to subscribers and context.onEvent alike', async () => {
    const cwd = process.cwd();
    const brain = genBhrain({ atom: slug, toolBoxes: [probe] });
    const subscribed: BhrainEvent[] = [];
    const passed: BhrainEvent[] = [];
    brain.subscribe((event) => subscribed.push(event));
    standin().script({ text: 'echoing', toolCalls: [{ name: 'echo', input: { text: `the token is ${SECRET}` } }] }, { text: 'done' });
    const result = await brain.invoke(
      { prompt: 'echo the token' },
      contextFor({ cwd, env: { PATH: process.env.PATH, DEPLOY_TOKEN: SECRET }, onEvent: (event) => passed.push(event) }),
    );

    expect(passed).toEqual(subscribed);
    expect(passed.map((event) => event.type)).toEqual([
      'SessionStarted',
      'ToolCallStarted',
      'ToolExecutionCompleted',
      'IterationCompleted',
      'IterationCompleted',
      'SessionCompleted',
    ]);
    expect(passed.every((event) => event.sessionUuid === result.sessionUuid && !Number.isNaN(Date.parse(event.occurredAt)))).toBe(true);
    const [started, callStarted, callCompleted, , , completed] = withoutTimes(passed);
    expect(started).toEqual({ type: 'SessionStarted', sessionUuid: result.sessionUuid, atom: slug, cwd });
    // what the stream shows never holds a secret of the environment: the input and the output are redacted
    expect(callStarted).toEqual({
      type: 'ToolCallStarted',
      sessionUuid: result.sessionUuid,
      callId: expect.any(String),
      toolName: 'echo',
      input: { text: 'the token is [redacted:DEPLOY_TOKEN]' },
    });
    expect(callCompleted).toEqual({
      type: 'ToolExecutionCompleted',
      sessionUuid: result.sessionUuid,
      callId: (callStarted as { callId: string }).callId,
      toolName: 'echo',
      durationMs: expect.any(Number),
      success: true,
      output: 'echo: the token is [redacted:DEPLOY_TOKEN]',
      isError: false,
      denied: null,
    });
    expect(JSON.stringify(passed)).not.toContain(SECRET);
    expect(completed).toEqual({
      type: 'SessionCompleted',
      sessionUuid: result.sessionUuid,
      termination: 'complete',
      iterations: 2,
      tokens: result.tokens,
      cash: result.cash,
      elapsedMs: result.elapsedMs,
    });
  });

  it('tool-call counts: guard denials, refusals at a prompt and failures are counted apart, and each denial is named with its reason', async () => {
    const events: BhrainEvent[] = [];
    const asked: string[] = [];
    const prompter: BhrainPrompter = async ({ call }) => (asked.push(call.name), false);
    standin().script(
      { toolCalls: [{ name: 'echo', input: { text: 'hi' } }, { name: 'push' }, { name: 'deploy' }, { name: 'fail' }, { name: 'nope' }] },
      { text: 'some calls were not allowed' },
    );
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [probe], permissionGuard: guard }, prompt: 'ship it' },
      contextFor({ prompter, onEvent: (event) => events.push(event) }),
    );

    expect(asked).toEqual(['push']);
    expect(result.toolCalls).toEqual({
      made: 5,
      // the failing tool and the unknown one: answered with an error, but not denied
      failed: 2,
      denied: 2,
      promptedDenied: 1,
      denials: [
        { callId: expect.any(String), toolName: 'push', reason: 'the user declined: push changes the remote', by: 'prompt' },
        { callId: expect.any(String), toolName: 'deploy', reason: 'deploys are not allowed here', by: 'guard' },
      ],
    });
    // calls of one turn run concurrently: their events come in the order they finish
    const completed = events.filter((event) => event.type === 'ToolExecutionCompleted');
    expect(completed.map((event) => [event.toolName, event.isError, event.denied?.by ?? null]).sort()).toEqual([
      ['deploy', true, 'guard'],
      ['echo', false, null],
      ['fail', true, null],
      ['nope', true, null],
      ['push', true, 'prompt'],
    ]);
    expect(completed.find((event) => event.toolName === 'deploy')?.output).toBe(
      'permission denied: deploys are not allowed here. deploy was not run; adjust your approach.',
    );
    expect(result.toolCalls.denials.map((denial) => denial.callId).sort()).toEqual(
      completed
        .filter((event) => event.denied)
        .map((event) => event.callId)
        .sort(),
    );
  });

  it('tool-call counts: a call that needs a prompt with no way to ask is denied by no-prompter, and counted as prompted-then-denied', async () => {
    standin().script({ toolCalls: [{ name: 'push' }] }, { text: 'could not push' });
    const result = await invoke({ config: { atom: slug, toolBoxes: [probe], permissionGuard: guard }, prompt: 'push' }, contextFor());
    expect(result.toolCalls).toEqual({
      made: 1,
      failed: 0,
      denied: 1,
      promptedDenied: 1,
      denials: [{ callId: expect.any(String), toolName: 'push', reason: 'push changes the remote', by: 'no-prompter' }],
    });
  });
});

describe.each(PROTOCOL_SLUGS)('events on $slug: retries, notices and endings', ({ slug }) => {
  it('events: RequestRetried says which attempt comes, after what wait, and why the last one failed', async () => {
    const events: BhrainEvent[] = [];
    standin().script({ error: { status: 529, retryAfterMs: 30 } }, { error: { status: 500 } }, { text: 'third time lucky' });
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [] }, prompt: 'hi' },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    expect(result.output).toBe('third time lucky');
    const retried = events.filter((event) => event.type === 'RequestRetried');
    expect(retried).toEqual([
      expect.objectContaining({ attempt: 2, delayMs: 30, reason: expect.stringMatching(/^HTTP 529: /) }),
      expect.objectContaining({ attempt: 3, delayMs: expect.any(Number), reason: expect.stringMatching(/^HTTP 500: /) }),
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'SessionStarted',
      'RequestRetried',
      'RequestRetried',
      'IterationCompleted',
      'SessionCompleted',
    ]);
  });

  it('events: a tool result event carries exactly the text the model reads, the runaway notice included', async () => {
    const events: BhrainEvent[] = [];
    standin().script(...[1, 2, 3].map(() => ({ toolCalls: [{ name: 'echo', input: { text: 'same' } }] })), { text: 'stopping' });
    const result = await invoke(
      { config: { atom: slug, toolBoxes: [probe] }, prompt: 'repeat' },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    const outputs = events.flatMap((event) => (event.type === 'ToolExecutionCompleted' ? [event.output] : []));
    expect(outputs).toEqual(result.transcript.flatMap((message) => (message.role === 'tool' ? [message.content] : [])));
    expect(outputs[2]).toMatch(/^echo: same\n\n\[bhrain: this is call 3 in a row to echo with the same arguments/);
  });

  it('events: a session stopped by a budget or at maxIterations still ends with SessionCompleted saying why', async () => {
    const events: BhrainEvent[] = [];
    standin().respond = () => ({ toolCalls: [{ name: 'echo', input: { text: String(Math.random()) } }] });
    await invoke(
      { config: { atom: slug, toolBoxes: [probe], maxIterations: 2 }, prompt: 'loop' },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    await invoke(
      { config: { atom: slug, toolBoxes: [probe], limits: { maxTokens: 1 } }, prompt: 'loop' },
      contextFor({ onEvent: (event) => events.push(event) }),
    );
    expect(events.filter((event) => event.type === 'SessionCompleted').map((event) => [event.termination, event.iterations])).toEqual([
      ['max-iterations', 2],
      ['budget', 1],
    ]);
  });
});

describe('events: a session that cannot start', () => {
  it('events: an input larger than the window throws before any event; an empty one starts and completes as a clarification', async () => {
    const events: BhrainEvent[] = [];
    const brain = genBhrain({ atom: 'claude/haiku', toolBoxes: [], limits: { contextTokens: 2_000 } });
    brain.subscribe((event) => events.push(event));
    await expect(brain.invoke({ prompt: 'x'.repeat(20_000) }, contextFor())).rejects.toThrow(/more than the context window/);
    expect(events).toEqual([]);
    await brain.invoke({ prompt: '  ' }, contextFor());
    expect(events.map((event) => [event.type, 'termination' in event ? event.termination : null])).toEqual([
      ['SessionStarted', null],
      ['SessionCompleted', 'clarification'],
    ]);
  });
});

import { describe, expect, it } from 'vitest';

import { PROTOCOL_SLUGS, useStandin } from '#standin/useStandin.js';
import type { StandinRequest, StandinTurn } from '#standin/types.js';
import { configureBhrain } from '../config/configureBhrain.js';
import type { BhrainSession } from '../BhrainSession.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain } from '../genBhrain.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genToolRegistry } from '../tool/genToolRegistry.js';
import { BhrainLoop } from './BhrainLoop.js';
import { openSession } from './openSession.js';
import { runSession } from './runSession.js';
import { appendMessages, sessionOf } from './SessionState.js';

const { standin, contextFor } = useStandin();

/** a tool that runs a callback while it executes (so a test can act on a running session), then succeeds */
const genHookToolBox = (onRun: () => void | Promise<void>): BhrainToolBox => ({
  name: 'hook',
  definitions: [{ name: 'hook', description: 'runs the hook', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }],
  execute: async ({ call }) => (await onRun(), { callId: call.id, success: true, output: `hooked ${call.input.n ?? ''}`.trim() }),
});
const hookCalls = (count: number): StandinTurn[] =>
  Array.from({ length: count }, (_, index) => ({ text: `step ${index + 1}`, toolCalls: [{ name: 'hook', input: { n: index + 1 } }] }));

describe.each(PROTOCOL_SLUGS)('BhrainLoop.terminate on $slug', ({ slug }) => {
  // docs/design/loop.md#terminate-on-request
  it('a running session stops at its next boundary: the call under way finishes, no request follows, termination terminated with the reason on the result and the entity', async () => {
    const asked: BhrainSession[] = [];
    const brain = genBhrain({
      atom: slug,
      toolBoxes: [genHookToolBox(() => void asked.push(BhrainLoop.terminate({ session: brain.session!, reason: 'the user moved on' })))],
    });
    standin().script(...hookCalls(3), { text: 'never asked' });
    const result = await brain.invoke({ prompt: 'hook three times' }, contextFor());

    // asked while it ran: the entity came back still ACTIVE
    expect(asked.map((session) => session.status)).toEqual(['ACTIVE']);
    expect(standin().requests).toHaveLength(1);
    expect(result).toMatchObject({ termination: 'terminated', terminationReason: 'the user moved on', iterations: 1 });
    expect(result.output).toBe(
      "step 1\n\n[bhrain stopped before the task was complete: the session was terminated (the user moved on). The answer above is partial. Continue from this session's refs.]",
    );
    expect(result.transcript.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual(['hooked 1']);
    expect(result.session).toMatchObject({ status: 'TERMINATED', terminationReason: 'the user moved on', iterationCount: 1 });
    expect(brain.session).toEqual(result.session);
  });

  it('brain.terminate(reason) stops every session the brain runs, and returns them; with none running it returns none, and an ended session is returned unchanged', async () => {
    const brain = genBhrain({ atom: slug, toolBoxes: [genHookToolBox(() => new Promise((resolve) => setTimeout(resolve, 50)))] });
    expect(brain.terminate('nothing runs')).toEqual([]);
    standin().respond = (request) => (JSON.stringify(request.body).includes('hooked') ? { text: 'never asked' } : undefined);
    standin().script(...hookCalls(2), ...hookCalls(2));
    const events: BhrainEvent[] = [];
    const stopped: (readonly BhrainSession[])[] = [];
    const onEvent = (event: BhrainEvent) => {
      events.push(event);
      if (event.type === 'ToolCallStarted' && !stopped.length) stopped.push(brain.terminate('shutting down'));
    };
    const [first, second] = await Promise.all([
      brain.invoke({ prompt: 'one' }, contextFor({ onEvent })),
      brain.invoke({ prompt: 'two' }, contextFor({ onEvent })),
    ]);
    expect(stopped[0].map((session) => session.status)).toEqual(['ACTIVE', 'ACTIVE']);
    expect([first.termination, second.termination]).toEqual(['terminated', 'terminated']);
    expect(events.filter((event) => event.type === 'SessionCompleted').map((event) => event.termination)).toEqual([
      'terminated',
      'terminated',
    ]);
    expect(BhrainLoop.terminate({ session: first.session, reason: 'again' })).toBe(first.session);
    expect(brain.terminate('after the end')).toEqual([]);
  });

  it('a session terminated while its subagent runs stops the subagent at its boundary too; the subagent FAILED, terminated', async () => {
    const isChild = (request: StandinRequest) => JSON.stringify(request.body).includes('TASK-CHILD');
    const childBox = genHookToolBox(() => void brain.terminate('stop the tree'));
    const brain = genBhrain({
      atom: slug,
      subagents: { types: [{ name: 'worker', description: 'works', systemPrompt: 'you work', toolBoxes: [childBox] }] },
      toolBoxes: [],
    });
    standin().respond = (request): StandinTurn =>
      isChild(request)
        ? { text: 'child step', toolCalls: [{ name: 'hook', input: { n: 1 } }] }
        : { toolCalls: [{ name: 'task', input: { description: 'work', prompt: 'TASK-CHILD: work', subagent_type: 'worker' } }] };
    const result = await brain.invoke({ prompt: 'delegate' }, contextFor());

    expect(result.termination).toBe('terminated');
    expect(result.subagents).toEqual([expect.objectContaining({ status: 'FAILED', termination: 'terminated', iterations: 1 })]);
    expect(result.subagents[0].result).toMatch(/^the worker subagent was terminated: stop the tree/);
    // one parent request, one child request: each stopped at its next boundary
    expect(standin().requests.map(isChild)).toEqual([false, true]);
  });
});

describe('BhrainLoop.iterate', () => {
  // docs/design/loop.md#iteration
  it('one call runs one loop cycle (generate, run the calls, append) and says what comes next; a caller can step a session with it', async () => {
    const config = configureBhrain({ atom: 'claude/haiku', toolBoxes: [genHookToolBox(() => undefined)] });
    const state = await openSession(
      {
        config,
        registry: genToolRegistry(config.toolBoxes),
        prompt: 'hook once',
        history: [],
        emit: () => undefined,
        context: contextFor(),
      },
      (child, lineage) => runSession({ ...child, history: [], context: lineage.context, lineage }),
    );
    appendMessages(state, [{ role: 'user', content: 'hook once' }]);
    standin().script(...hookCalls(1), { text: 'done' });

    const first = await BhrainLoop.iterate({ session: state });
    expect(first).toMatchObject({ number: 1, hadToolCalls: true, toolCallCount: 1, next: { type: 'run_again' } });
    expect(first.tokenUsage.outputTokens).toBeGreaterThan(0);
    expect(state.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);

    const second = await BhrainLoop.iterate({ session: state });
    expect(second).toMatchObject({ number: 2, hadToolCalls: false, toolCallCount: 0, next: { type: 'final_output', output: 'done' } });
    expect(sessionOf(state)).toMatchObject({ status: 'ACTIVE', iterationCount: 2 });
    expect(standin().requests).toHaveLength(2);
  });
});

describe('message timestamps', () => {
  // docs/design/loop.md#messages
  it('every message the loop appends carries the ISO time it was appended; a history keeps its own', async () => {
    standin().script(...hookCalls(1), { text: 'done' });
    const before = new Date().toISOString();
    const result = await genBhrain({ atom: 'claude/haiku', toolBoxes: [genHookToolBox(() => undefined)] }).invoke(
      {
        prompt: 'hook',
        history: [
          { role: 'user', content: 'earlier' },
          { role: 'assistant', content: 'noted', toolCalls: [] },
        ],
      },
      contextFor(),
    );
    const [earlier, noted, ...appended] = result.transcript;
    expect(earlier.timestamp).toBeUndefined();
    expect(noted.timestamp).toBeUndefined();
    expect(appended.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    for (const message of appended) {
      expect(message.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(message.timestamp! >= before).toBe(true);
    }
    expect(appended.map((message) => message.timestamp)).toEqual([...appended.map((message) => message.timestamp!)].sort());
    // the wire carries no timestamp: a request is what the model needs, nothing more
    expect(JSON.stringify(standin().requests.map((request) => request.body))).not.toContain('timestamp');
  });
});

import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { useStandin } from '#standin/useStandin.js';
import type { BhrainEvent } from '../events.js';
import { genBhrain } from '../genBhrain.js';
import { genRulesGuard } from '../permission/genRulesGuard.js';
import type { BhrainHook, BhrainHookInput, BhrainHooks } from './BhrainHook.js';
import { exists, tempDir } from '#test-helpers/fs.js';

const { standin, contextFor } = useStandin();
let cwd: string;

beforeEach(async () => {
  cwd = tempDir('bhrain-hooks-loop-');
});

/** a hook that records its inputs and answers with answer(input) */
const recording = (answer: (input: BhrainHookInput) => ReturnType<BhrainHook['run']>, extra: Partial<BhrainHook> = {}) => {
  const seen: BhrainHookInput[] = [];
  const hook: BhrainHook = { name: 'probe', ...extra, run: (input) => (seen.push(input), answer(input)) };
  return { hook, seen };
};
const brainWith = (hooks: BhrainHooks, more: Parameters<typeof genBhrain>[0] | object = {}) =>
  genBhrain({ atom: 'claude/haiku', sandbox: { mode: 'off' }, hooks, ...more });
const run = async (brain: ReturnType<typeof brainWith>, prompt = 'go') => {
  const events: BhrainEvent[] = [];
  const result = await brain.invoke({ prompt }, contextFor({ cwd, onEvent: (event) => events.push(event) }));
  return { result, events };
};
const lastToolResult = (n: number) => {
  const messages = (standin().requests[n].body as { messages: Array<{ content: unknown }> }).messages;
  return JSON.stringify(messages[messages.length - 1].content);
};

describe('hooks in the library: PreToolUse', () => {
  it("hooks: a PreToolUse hook gets Claude Code's input (tool_name Write, file_path absolute) and its updatedInput is what runs", async () => {
    const { hook, seen } = recording((input) => ({
      hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { ...input.tool_input, file_path: join(cwd, 'b.txt') } },
    }));
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] }, { text: 'ok' });
    const { result } = await run(brainWith({ PreToolUse: [{ ...hook, matcher: 'write' }] }));
    expect(result.termination).toBe('complete');
    expect(seen[0]).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { path: 'a.txt', file_path: join(cwd, 'a.txt') },
      cwd,
    });
    expect(await exists(join(cwd, 'a.txt'))).toBe(false);
    expect(await readFile(join(cwd, 'b.txt'), 'utf8')).toBe('x');
  });

  it("hooks: an updatedInput is checked again: one the tool's schema refuses is not run, one a deny rule names is denied", async () => {
    const bad = recording(() => ({ hookSpecificOutput: { updatedInput: { path: 5, content: 'x' } } }));
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] }, { text: 'ok' });
    await run(brainWith({ PreToolUse: [bad.hook] }));
    expect(lastToolResult(1)).toMatch(/a PreToolUse hook's updatedInput is not valid for it/);
    expect(await exists(join(cwd, 'a.txt'))).toBe(false);

    const sneaky = recording(() => ({ hookSpecificOutput: { updatedInput: { path: 'secret.txt', content: 'x' } } }));
    standin().reset();
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] }, { text: 'ok' });
    const guard = genRulesGuard({ allow: ['write(*)'], deny: ['write(secret.txt)'] });
    const { result } = await run(brainWith({ PreToolUse: [sneaky.hook] }, { permissionGuard: guard }));
    expect(result.toolCalls.denials).toEqual([expect.objectContaining({ by: 'guard' })]);
    expect(await exists(join(cwd, 'secret.txt'))).toBe(false);
  });

  it('hooks: a hook allow never passes the protected paths: a write into .git/hooks is still asked about, and with no prompter denied', async () => {
    await mkdir(join(cwd, '.git', 'hooks'), { recursive: true });
    const allow = recording(() => ({ hookSpecificOutput: { permissionDecision: 'allow', permissionDecisionReason: 'trusted' } }));
    standin().script({ toolCalls: [{ name: 'write', input: { path: '.git/hooks/pre-commit', content: 'evil' } }] }, { text: 'ok' });
    const { result } = await run(brainWith({ PreToolUse: [allow.hook] }));
    expect(allow.seen).toHaveLength(1);
    expect(result.toolCalls.denials).toEqual([expect.objectContaining({ by: 'no-prompter' })]);
    expect(await exists(join(cwd, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it("hooks: a hook's ask with no prompter is a denial that says so (as the guard's own asks)", async () => {
    const ask = recording(() => ({ hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: 'writes need a human' } }));
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] }, { text: 'ok' });
    const { result } = await run(brainWith({ PreToolUse: [ask.hook] }));
    expect(result.toolCalls.denials).toEqual([
      expect.objectContaining({ by: 'no-prompter', reason: 'a PreToolUse hook asks for approval: writes need a human' }),
    ]);
    expect(await exists(join(cwd, 'a.txt'))).toBe(false);
  });

  it('hooks: a call the guard denies runs no PreToolUse hook', async () => {
    const probe = recording(() => undefined);
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] }, { text: 'ok' });
    await run(brainWith({ PreToolUse: [probe.hook] }, { permissionGuard: genRulesGuard({ deny: ['write(*)'] }) }));
    expect(probe.seen).toHaveLength(0);
  });

  it('hooks: a PreToolUse hook that never answers is stopped at its timeoutMs and the call is denied; a PostToolUse one that throws is a warning, the result kept', async () => {
    const hang: BhrainHook = { name: 'hang', timeoutMs: 50, run: () => new Promise(() => {}) };
    const boom: BhrainHook = {
      name: 'boom',
      run: () => {
        throw new Error('boom');
      },
    };
    standin().script(
      { toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] },
      { toolCalls: [{ name: 'read', input: { path: 'package.json' } }] },
      { text: 'ok' },
    );
    const { result, events } = await run(brainWith({ PreToolUse: [{ ...hang, matcher: 'Write' }], PostToolUse: [boom] }));
    expect(result.termination).toBe('complete');
    expect(lastToolResult(1)).toMatch(/the PreToolUse hook 'hang' failed \(timed out after 50 ms\), so the call is denied/);
    expect(await exists(join(cwd, 'a.txt'))).toBe(false);
    expect(lastToolResult(2)).not.toMatch(/boom/);
    const completed = events.filter((event) => event.type === 'HookCompleted');
    expect(completed.map((event) => [event.hookEventName, event.hookName, event.decision, event.exitCode])).toEqual([
      ['PreToolUse', 'hang', 'failed', null],
      ['PostToolUse', 'boom', 'failed', null],
    ]);
  });
});

describe('hooks in the library: the session events', () => {
  it('hooks: a Stop hook that blocks makes the session go on with its reason (stop_hook_active on the repeat), at most 3 times', async () => {
    const stop = recording(() => ({ decision: 'block', reason: 'the tests still fail' }));
    standin().script({ text: 'done 1' }, { text: 'done 2' }, { text: 'done 3' }, { text: 'done 4' });
    const { result } = await run(brainWith({ Stop: [stop.hook] }));
    expect(result.termination).toBe('complete');
    expect(result.output).toBe('done 4');
    expect(standin().requests).toHaveLength(4);
    expect(stop.seen.map((input) => input.stop_hook_active)).toEqual([false, true, true, true]);
    expect(lastToolResult(1)).toMatch(/A Stop hook did not let you stop yet: the tests still fail/);
  });

  it('hooks: a UserPromptSubmit hook that blocks ends the session before any request; SessionEnd hears why', async () => {
    const block = recording(() => ({ decision: 'block', reason: 'no prompts about production' }));
    const end = recording(() => undefined);
    const { result } = await run(brainWith({ UserPromptSubmit: [block.hook], SessionEnd: [end.hook] }), 'drop the prod db');
    expect(block.seen[0].prompt).toBe('drop the prod db');
    expect(standin().requests).toHaveLength(0);
    expect(result.termination).toBe('terminated');
    expect(result.terminationReason).toBe('a UserPromptSubmit hook blocked the prompt: no prompts about production');
    expect(end.seen[0]).toMatchObject({ hook_event_name: 'SessionEnd', reason: 'terminated' });
  });

  it('hooks: continue: false from a PostToolUse hook stops the session at its next boundary, with the stopReason', async () => {
    const halt = recording(() => ({ continue: false, stopReason: 'budget for edits is spent' }));
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'x' } }] }, { text: 'never asked' });
    const { result } = await run(brainWith({ PostToolUse: [halt.hook] }));
    expect(standin().requests).toHaveLength(1);
    expect(result.termination).toBe('terminated');
    expect(result.terminationReason).toBe('a PostToolUse hook stopped the session: budget for edits is spent');
  });

  it('hooks: PreCompact runs before the memory manager replaces the context', async () => {
    const pre = recording(() => undefined);
    const memoryManager = {
      name: 'always',
      shouldUpdate: () => true,
      getUpdate: ({ messages }: { messages: readonly unknown[] }) => ({ shouldUpdate: true, newMessages: [...messages] as never }),
    };
    standin().script({ toolCalls: [{ name: 'read', input: { path: 'x' } }] }, { text: 'ok' });
    const { events } = await run(brainWith({ PreCompact: [pre.hook] }, { memoryManager }));
    expect(pre.seen[0]).toMatchObject({ hook_event_name: 'PreCompact', trigger: 'auto' });
    const types = events.map((event) => (event.type === 'HookCompleted' ? `${event.type}:${event.hookEventName}` : event.type));
    expect(types.indexOf('HookCompleted:PreCompact')).toBeLessThan(types.indexOf('Compacted'));
  });

  it('hooks: a config whose hooks name an unknown event is refused before any loop, naming the events', () => {
    expect(() => brainWith({ Bogus: [] } as never)).toThrow(/hooks are keyed by event: SessionStart, UserPromptSubmit, PreToolUse/);
  });
});

describe('hooks in the library: a stopped session', () => {
  it('hooks: aborting the session stops a PreToolUse hook under way (the call is denied), and SessionEnd still runs', async () => {
    const abort = new AbortController();
    const hang: BhrainHook = {
      name: 'hang',
      run: () => {
        abort.abort();
        return new Promise(() => {});
      },
    };
    const end = recording(() => undefined);
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'x' } }] }, { text: 'never asked' });
    const started = Date.now();
    const result = await brainWith({ PreToolUse: [hang], SessionEnd: [end.hook] }).invoke(
      { prompt: 'go' },
      contextFor({ cwd, signal: abort.signal }),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await exists(join(cwd, 'a.txt'))).toBe(false);
    expect(end.seen).toHaveLength(1);
    expect(result.termination).not.toBe('complete');
  });
});

describe('hooks in the library: subagents', () => {
  it("hooks: a subagent's end runs SubagentStop (not Stop), its tool calls run the PreToolUse hooks, and the parent's end runs Stop", async () => {
    const stop = recording(() => undefined);
    const subagentStop = recording(() => undefined);
    const pre = recording(() => undefined);
    // the queue serves the parent's task call, the child's read and answer, then the parent's answer
    standin().script(
      { toolCalls: [{ name: 'task', input: { description: 'look', prompt: 'read package.json', subagent_type: 'explore' } }] },
      { toolCalls: [{ name: 'read', input: { path: 'package.json' } }] },
      { text: 'child: no package.json' },
      { text: 'parent: done' },
    );
    const { result } = await run(
      brainWith({ Stop: [stop.hook], SubagentStop: [subagentStop.hook], PreToolUse: [pre.hook] }, { subagents: true }),
    );
    expect(result.output).toBe('parent: done');
    expect(subagentStop.seen).toHaveLength(1);
    expect(subagentStop.seen[0]).toMatchObject({ hook_event_name: 'SubagentStop', stop_hook_active: false });
    expect(stop.seen).toHaveLength(1);
    expect(stop.seen[0].session_id).not.toBe(subagentStop.seen[0].session_id);
    expect(pre.seen.map((input) => input.tool_name)).toEqual(['Task', 'Read']);
  });
});

describe('hooks in the library: matchers of the session events', () => {
  it("hooks: a SessionStart matcher picks by source, as in Claude Code: 'resume' does not run on a new session, 'startup' does", async () => {
    const resume = recording(() => undefined);
    const startup = recording(() => undefined);
    standin().script({ text: 'ok' });
    await run(
      brainWith({
        SessionStart: [
          { ...resume.hook, matcher: 'resume' },
          { ...startup.hook, matcher: 'startup' },
        ],
      }),
    );
    expect(resume.seen).toHaveLength(0);
    expect(startup.seen).toHaveLength(1);
  });
});

import { mkdir, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { genBhrainSubagent } from '../../agent/BhrainSession.js';
import type { BhrainHookInput } from '../../agent/hooks/BhrainHook.js';
import { startRunAudit } from './genRunAudit.js';
import { diffSnapshots, snapshotTree } from './snapshotTree.js';
import { tempDir } from '#test-helpers/fs.js';

let root: string;
beforeEach(async () => {
  root = tempDir('bhrain-snapshot-');
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const BIG = { maxFiles: 10_000, maxHashBytes: 1024 * 1024, maxMs: 10_000 };
const noRedact = (text: string) => text;
const NOTHING_ELSE = { network: null, tokens: null, costUsd: null, subagents: [] };
/** .what = 200 directories of a file each, so a start walk is still going when a racing write lands; and a write into each */
const DIRS = Array.from({ length: 200 }, (_, index) => `d${index}`);
const seedDirs = () => Promise.all(DIRS.map(async (dir) => (await mkdir(join(root, dir)), writeFile(join(root, dir, 'f.txt'), 'f'))));
const writeIntoEach = () => Promise.all(DIRS.map((dir) => writeFile(join(root, dir, 'new.txt'), 'n')));

describe('the audit walk of the working directory', () => {
  it('finds a file changed in place with the same size and its old times put back (by content hash), and never enters .git or node_modules', async () => {
    await writeFile(join(root, 'a.txt'), 'aaaa');
    await mkdir(join(root, '.git'));
    await mkdir(join(root, 'node_modules', 'x'), { recursive: true });
    const start = await snapshotTree({ root, budget: BIG });
    const past = new Date(Date.now() - 60_000);
    await utimes(join(root, 'a.txt'), past, past);
    const touched = await snapshotTree({ root, budget: BIG });
    await writeFile(join(root, 'a.txt'), 'bbbb');
    await utimes(join(root, 'a.txt'), past, past);
    await writeFile(join(root, '.git', 'index'), 'changed');
    await writeFile(join(root, 'node_modules', 'x', 'i.js'), 'new');
    const end = await snapshotTree({ root, budget: BIG, previous: touched });
    expect(diffSnapshots(start, touched)).toEqual({ created: [], changed: [], deleted: [] });
    expect(diffSnapshots(touched, end)).toEqual({ created: [], changed: ['a.txt'], deleted: [] });
    expect(end.cuts.size).toBe(0);
  });

  it('a whole directory made or removed: each file in it is created or deleted', async () => {
    await mkdir(join(root, 'old', 'deep'), { recursive: true });
    await writeFile(join(root, 'old', 'deep', 'o.txt'), 'o');
    const start = await snapshotTree({ root, budget: BIG });
    await rm(join(root, 'old'), { recursive: true });
    await mkdir(join(root, 'new', 'deeper'), { recursive: true });
    await writeFile(join(root, 'new', 'deeper', 'n.txt'), 'n');
    const end = await snapshotTree({ root, budget: BIG, previous: start });
    expect(diffSnapshots(start, end)).toEqual({ created: ['new/deeper/n.txt'], changed: [], deleted: ['old/deep/o.txt'] });
  });

  it('hostile: past the file budget the walk stops and says `files`; a path the cut walk never reached is neither created nor deleted', async () => {
    await mkdir(join(root, 'many'));
    for (let index = 0; index < 50; index++) await writeFile(join(root, 'many', `f${String(index).padStart(2, '0')}`), '');
    const budget = { ...BIG, maxFiles: 10 };
    const start = await snapshotTree({ root, budget });
    expect([...start.cuts]).toEqual(['files']);
    expect(start.entries.size).toBe(10);
    const end = await snapshotTree({ root, budget, previous: start });
    expect(diffSnapshots(start, end)).toEqual({ created: [], changed: [], deleted: [] });
  });

  it('hostile: a file past the byte budget is not read (`bytes`), and is still found changed by its stat', async () => {
    await writeFile(join(root, 'big.bin'), '');
    await truncate(join(root, 'big.bin'), 2 * 1024 * 1024);
    const budget = { ...BIG, maxHashBytes: 1024 * 1024 };
    const start = await snapshotTree({ root, budget });
    expect([...start.cuts]).toEqual(['bytes']);
    expect(start.entries.get('big.bin')!.hash).toBeNull();
    await truncate(join(root, 'big.bin'), 3 * 1024 * 1024);
    const end = await snapshotTree({ root, budget, previous: start });
    expect(diffSnapshots(start, end).changed).toEqual(['big.bin']);
  });

  it('hostile: past the time budget the walk stops and says `time`', async () => {
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'sub', 'x'), 'x');
    let clock = 0;
    const snapshot = await snapshotTree({ root, budget: { ...BIG, maxMs: 5 } }, { now: () => (clock += 10) });
    expect([...snapshot.cuts]).toEqual(['time']);
  });
});

describe('the audit of a run', () => {
  it('the first tool call waits for the start walk: every file the call writes is created, none part of the start state', async () => {
    await seedDirs();
    const audit = startRunAudit({ cwd: root, redact: noRedact, budget: BIG });
    const guard = audit.guard({ name: 'allow', check: () => ({ decision: 'allow' }) });
    audit.begin();
    await guard.check({ call: { id: '1', name: 'write', input: {} } }, { cwd: root });
    audit.onEvent({ type: 'ToolCallStarted', sessionUuid: 's', callId: '1', toolName: 'write', input: {}, occurredAt: '' });
    await writeIntoEach();
    const result = await audit.finish(NOTHING_ELSE);
    expect(result.files.created.items).toHaveLength(DIRS.length);
    expect(result.files).toMatchObject({ walked: true, complete: true });
  });

  it('a hook waits for the start walk too: every file a SessionStart hook writes is created, none part of the start state', async () => {
    await seedDirs();
    const audit = startRunAudit({ cwd: root, redact: noRedact, budget: BIG });
    const hooks = audit.hooks({ SessionStart: [{ name: 'touch', run: async () => void (await writeIntoEach()) }] });
    audit.begin();
    audit.onEvent({ type: 'HookStarted', sessionUuid: 's', hookEventName: 'SessionStart', hookName: 'touch', occurredAt: '' });
    await hooks.SessionStart![0].run({ hook_event_name: 'SessionStart' } as BhrainHookInput, { signal: new AbortController().signal });
    const result = await audit.finish(NOTHING_ELSE);
    expect(result.files.created.items).toHaveLength(DIRS.length);
    expect(result.files).toMatchObject({ walked: true, complete: true });
  });

  it('a run where no tool and no hook ran walks nothing at the end (walked: false)', async () => {
    const audit = startRunAudit({ cwd: root, redact: noRedact, budget: BIG });
    audit.begin();
    await writeFile(join(root, 'someone-else.txt'), 'x');
    const result = await audit.finish(NOTHING_ELSE);
    expect(result.files).toMatchObject({ created: { items: [], omitted: 0 }, walked: false });
  });

  it('counts MCP tools, subagents, hooks and denials from the events, and keeps only the commands that ran, redacted', async () => {
    const audit = startRunAudit({ cwd: root, redact: (text) => text.replaceAll('s3cret', '[REDACTED]'), budget: BIG });
    const base = { sessionUuid: 's', occurredAt: '', output: '', isError: false, durationMs: 12.4 };
    const call = (callId: string, toolName: string, input: unknown) =>
      audit.onEvent({ type: 'ToolCallStarted', sessionUuid: 's', callId, toolName, input, occurredAt: '' });
    call('1', 'mcp__srv__look', {});
    audit.onEvent({ ...base, type: 'ToolExecutionCompleted', callId: '1', toolName: 'mcp__srv__look', success: true, denied: null });
    call('2', 'mcp__srv__look', {});
    audit.onEvent({ ...base, type: 'ToolExecutionCompleted', callId: '2', toolName: 'mcp__srv__look', success: false, denied: null });
    call('3', 'bash', { command: 'curl -H "token: s3cret" x' });
    const denied = { by: 'guard' as const, reason: 'no' };
    audit.onEvent({ ...base, type: 'ToolExecutionCompleted', callId: '3', toolName: 'bash', success: false, denied });
    call('4', 'bash', { command: 'echo s3cret' });
    audit.onEvent({ ...base, type: 'ToolExecutionCompleted', callId: '4', toolName: 'bash', success: true, exitCode: 0, denied: null });
    audit.onEvent({
      type: 'SubagentStarted',
      sessionUuid: 'child',
      parentSessionUuid: 's',
      callId: '5',
      subagentType: 'explore',
      description: 'look around',
      atom: 'qwen',
      occurredAt: '',
    });
    audit.onEvent({
      type: 'SubagentCompleted',
      sessionUuid: 'child',
      parentSessionUuid: 's',
      callId: '5',
      subagentType: 'explore',
      status: 'COMPLETED',
      termination: 'complete',
      metrics: { iterations: 1, tokens: { input: 1, output: 1, cache: { get: 0, set: 0 } }, cash: null, elapsedMs: 1 },
      occurredAt: '',
    });
    audit.onEvent({
      type: 'HookCompleted',
      sessionUuid: 's',
      hookEventName: 'Stop',
      hookName: 'true',
      durationMs: 3.2,
      exitCode: 0,
      decision: null,
      occurredAt: '',
    });
    // the child's transcript: one bash call ran (exit 3), one was denied (its result has no exit code)
    const child = {
      ...genBhrainSubagent({ uuid: 'child', sessionUuid: 's', type: 'explore', prompt: 'p', description: 'look around', atom: 'qwen' }),
      transcript: [
        {
          role: 'assistant' as const,
          content: '',
          toolCalls: [
            { id: 'c1', name: 'bash', input: { command: 'grep s3cret -r .' } },
            { id: 'c2', name: 'bash', input: { command: 'rm -rf /' } },
          ],
        },
        { role: 'tool' as const, toolCallId: 'c1', toolName: 'bash', content: '', isError: true, exitCode: 3 },
        { role: 'tool' as const, toolCallId: 'c2', toolName: 'bash', content: 'permission denied', isError: true },
      ],
    };
    const result = await audit.finish({ ...NOTHING_ELSE, subagents: [child] });
    expect(result.tools).toEqual([{ tool: 'mcp__srv__look', calls: 2, failed: 1, denied: 0 }]);
    expect(result.commands).toEqual({
      items: [
        { command: 'echo [REDACTED]', exitCode: 0, durationMs: 12, subagent: null },
        { command: 'grep [REDACTED] -r .', exitCode: 3, durationMs: null, subagent: 'child' },
      ],
      omitted: 0,
    });
    expect(result.denied).toBe(1);
    expect(result.subagents).toEqual({
      items: [{ uuid: 'child', type: 'explore', description: 'look around', status: 'COMPLETED' }],
      omitted: 0,
    });
    expect(result.hooks.items).toEqual([{ event: 'Stop', hook: 'true', exitCode: 0, decision: null, durationMs: 3 }]);
  });
});

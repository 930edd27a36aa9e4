import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { genRecordingLog, PROTOCOL_SLUGS, useStandin } from '../../../../test/standin/useStandin.js';
import type { BrainToolCall } from '../../../contract/BrainMessage.js';
import { invoke } from '../genBhrain.js';
import { genBashToolBox } from '../tools/bash/genBashToolBox.js';
import { genFilesToolBox } from '../tools/files/genFilesToolBox.js';
import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from './builtinGuards.js';
import { genRulesGuard } from './genRulesGuard.js';
import { splitShellCommand } from './splitShellCommand.js';

const { standin, contextFor } = useStandin();
const tempDir = () => mkdtemp(join(tmpdir(), 'bhrain-guard-'));
const exists = (path: string) => stat(path).then(() => true, () => false);
const toolResults = (transcript: { role: string; content: string }[]) => transcript.filter((message) => message.role === 'tool').map((message) => message.content);

describe.each(PROTOCOL_SLUGS)('permission guards on $slug', ({ slug }) => {
  const config = (permissionGuard: BhrainPermissionGuard) => ({ atom: slug, toolBoxes: [genFilesToolBox(), genBashToolBox()], permissionGuard });

  it('usecase.6: a pre-approved operation executes without prompting', async () => {
    const cwd = await tempDir();
    const prompts: string[] = [];
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'npm run test:unit --silent || true; echo ran > out.txt' } }] }, { text: 'ok' });
    const guard = genRulesGuard({ allow: ['bash(npm run test:*)', 'bash(true)', 'bash(echo *)'] });
    await invoke({ config: config(guard), prompt: 'test' }, contextFor({ cwd, prompter: async ({ call }) => (prompts.push(call.name), false) }));
    expect(prompts).toEqual([]);
    expect(await readFile(join(cwd, 'out.txt'), 'utf8')).toBe('ran\n');
  });

  it('usecase.6 / usecase.9: a prompt pauses the call, asks the user, and proceeds only if approved', async () => {
    const cwd = await tempDir();
    const asked: Array<{ call: BrainToolCall; reason: string }> = [];
    standin().script(
      { toolCalls: [{ name: 'write', input: { path: 'yes.txt', content: 'approved' } }, { name: 'write', input: { path: 'no.txt', content: 'declined' } }] },
      { text: 'one written, one declined' },
    );
    const result = await invoke(
      { config: config(promptForWrites), prompt: 'write both' },
      contextFor({ cwd, prompter: async (request) => (asked.push(request), request.call.input.path === 'yes.txt') }),
    );
    expect(asked.map((request) => [request.call.input.path, request.reason])).toEqual([
      ['yes.txt', 'write may change files or run commands'],
      ['no.txt', 'write may change files or run commands'],
    ]);
    expect(await readFile(join(cwd, 'yes.txt'), 'utf8')).toBe('approved');
    expect(await exists(join(cwd, 'no.txt'))).toBe(false);
    expect(toolResults(result.transcript)[1]).toMatch(/^permission denied: the user declined write/);
  });

  it('usecase.6 / usecase.4: a blocked operation is rejected and the model receives a rejection it can reason about', async () => {
    const cwd = await tempDir();
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'echo hi && rm -rf ./victim' } }] }, { text: 'I will not delete it' });
    const guard = genRulesGuard({ allow: ['bash(echo *)'], deny: ['bash(rm *)'] });
    const result = await invoke({ config: config(guard), prompt: 'clean up' }, contextFor({ cwd }));
    expect(toolResults(result.transcript)[0]).toMatch(/^permission denied: denied by rule `bash\(rm \*\)` \(rm -rf \.\/victim\)/);
    expect(result.output).toBe('I will not delete it');
  });

  it('usecase.9: with no guard every call is allowed; a guard is consulted before each execution', async () => {
    const cwd = await tempDir();
    const checked: string[] = [];
    const spy: BhrainPermissionGuard = { name: 'spy', check: ({ call }) => (checked.push(call.name), allowAll.check({ call }, { cwd })) };
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'a' } }, { name: 'read', input: { path: 'a.txt' } }] }, { text: 'done' });
    await invoke({ config: config(spy), prompt: 'go' }, contextFor({ cwd }));
    expect(checked.sort()).toEqual(['read', 'write']);
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'b.txt', content: 'b' } }] }, { text: 'done' });
    await invoke({ config: { atom: slug, toolBoxes: [genFilesToolBox()] }, prompt: 'go' }, contextFor({ cwd }));
    expect(await readFile(join(cwd, 'b.txt'), 'utf8')).toBe('b');
  });

  it('usecase.9: a guard that throws (or hangs) denies the call, logs the error, and the loop goes on', async () => {
    const cwd = await tempDir();
    const { lines, log } = genRecordingLog();
    const throwing: BhrainPermissionGuard = { name: 'broken', check: () => { throw new Error('policy db down'); } };
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'x.txt', content: 'x' } }] }, { text: 'could not write' });
    const result = await invoke({ config: config(throwing), prompt: 'go' }, contextFor({ cwd, log }));
    expect(result.termination).toBe('complete');
    expect(await exists(join(cwd, 'x.txt'))).toBe(false);
    expect(toolResults(result.transcript)[0]).toMatch(/^permission denied: the permission guard failed \(policy db down\)/);
    expect(lines.some((line) => line.level === 'error' && line.message.includes("permission guard 'broken' failed"))).toBe(true);

    const hanging: BhrainPermissionGuard = { name: 'hung', check: () => new Promise(() => {}) };
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'y.txt', content: 'y' } }] }, { text: 'gave up' });
    const hung = await invoke({ config: { ...config(hanging), limits: { guardTimeoutMs: 100 } }, prompt: 'go' }, contextFor({ cwd }));
    expect(toolResults(hung.transcript)[0]).toMatch(/did not answer within 100 ms/);
    expect(await exists(join(cwd, 'y.txt'))).toBe(false);
  });

  it('usecase.9: a prompt with no way to ask (no TTY, CI) is a denial saying so', async () => {
    const cwd = await tempDir();
    standin().script({ toolCalls: [{ name: 'bash', input: { command: 'touch made' } }] }, { text: 'needs approval' });
    const result = await invoke({ config: config(promptForWrites), prompt: 'go' }, contextFor({ cwd }));
    expect(toolResults(result.transcript)[0]).toMatch(/approval was needed but there is no way to ask the user/);
    expect(await exists(join(cwd, 'made'))).toBe(false);
  });

  it('readOnly allows read, glob, grep and websearch and denies everything else', async () => {
    const cwd = await tempDir();
    standin().script({ toolCalls: [{ name: 'write', input: { path: 'w.txt', content: 'w' } }, { name: 'glob', input: { pattern: '*' } }] }, { text: 'done' });
    const result = await invoke({ config: config(readOnly), prompt: 'go' }, contextFor({ cwd }));
    const [write, glob] = toolResults(result.transcript);
    expect(write).toMatch(/^permission denied: write is not allowed: this session is read-only/);
    expect(glob).not.toMatch(/permission denied/);
  });
});

describe('genRulesGuard', () => {
  const cwd = '/work/project';
  const check = (guard: BhrainPermissionGuard, name: string, input: Record<string, unknown>) =>
    guard.check({ call: { id: 'c', name, input } }, { cwd });

  it('evaluates deny → prompt → allow, and prompts when no rule allows', async () => {
    const guard = genRulesGuard({ allow: ['read', 'write(src/**)', 'bash(npm run test:*)'], prompt: ['write(src/secrets/**)'], deny: ['bash(rm *)'] });
    expect(await check(guard, 'read', { path: '/etc/passwd' })).toEqual({ decision: 'allow' });
    expect(await check(guard, 'write', { path: 'src/a/b.ts' })).toEqual({ decision: 'allow' });
    expect((await check(guard, 'write', { path: 'src/secrets/key.ts' })).decision).toBe('prompt');
    expect((await check(guard, 'write', { path: 'docs/x.md' })).decision).toBe('prompt');
    expect((await check(guard, 'write', { path: '../outside/src/x.ts' })).decision).toBe('prompt');
    expect(await check(guard, 'bash', { command: 'npm run test:unit' })).toEqual({ decision: 'allow' });
    expect((await check(guard, 'bash', { command: 'rm -rf /' })).decision).toBe('deny');
  });

  it('cannot be bypassed by ;, &&, |, $( ), backticks, bash -c, eval, env prefixes or quoting', async () => {
    const guard = genRulesGuard({ allow: ['bash(npm run test:*)', 'bash(echo *)'], deny: ['bash(rm *)', 'bash(curl *)'] });
    for (const command of [
      'npm run test:unit; rm -rf /',
      'npm run test:unit && rm -rf /',
      'npm run test:unit | rm -rf /',
      'echo $(rm -rf /)',
      'echo `rm -rf /`',
      'echo "$(rm -rf /)"',
      'bash -c "rm -rf /"',
      "sh -c 'npm run test:unit; rm -rf /'",
      'eval "rm -rf /"',
      'FOO=1 rm -rf /',
      'env FOO=1 rm -rf /',
      "'rm' -rf /",
      'r""m -rf /',
      '(rm -rf /)',
      '{ rm -rf /; }',
    ])
      expect({ command, decision: (await check(guard, 'bash', { command })).decision }).toEqual({ command, decision: 'deny' });
    expect((await check(guard, 'bash', { command: 'npm run test:unit && wget x' })).decision).toBe('prompt');
    expect((await check(guard, 'bash', { command: 'npm run test:unit && echo ok' })).decision).toBe('allow');
  });

  it('rejects a malformed rule at configuration time, naming it', () => {
    expect(() => genRulesGuard({ allow: ['bash(npm test'] })).toThrow(/invalid permission rule 'bash\(npm test'/);
  });
});

describe('splitShellCommand', () => {
  it('lists every simple command a line runs', () => {
    expect(splitShellCommand('a 1; b 2 && c "3 4" | d $(e 5) `f` || FOO=bar g')).toEqual(['a 1', 'b 2', 'c 3 4', 'e 5', 'f', 'd $(e 5) `f`', 'g']);
    expect(splitShellCommand('npm test')).toEqual(['npm test']);
    expect(splitShellCommand("bash -c 'x; y'")).toEqual(['x', 'y']);
    expect(splitShellCommand('echo "a;b"')).toEqual(['echo a;b']);
  });
});

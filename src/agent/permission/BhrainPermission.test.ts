import { describe, expect, it } from 'vitest';

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { BhrainPermission } from './BhrainPermission.js';
import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from './builtinGuards.js';
import { genRulesGuard } from './genRulesGuard.js';

const call = (name: string, input: Record<string, unknown>): BrainToolCall => ({ id: `call_${name}`, name, input });
const write = call('write', { path: 'notes.md', content: 'x' });
const read = call('read', { path: 'notes.md' });

describe('BhrainPermission.check: a guard judges one call, and fails closed', () => {
  // docs/design/loop.md#permission
  it('given the built-in guards, when a write and a read are checked, then each verdict is the guard’s', async () => {
    expect(await BhrainPermission.check({ call: write, guard: allowAll })).toEqual({ decision: 'allow' });
    expect(await BhrainPermission.check({ call: write, guard: readOnly })).toMatchObject({ decision: 'deny' });
    expect(await BhrainPermission.check({ call: read, guard: readOnly })).toEqual({ decision: 'allow' });
    expect(await BhrainPermission.check({ call: write, guard: promptForWrites })).toMatchObject({ decision: 'prompt' });
  });

  it('given a rules guard and a custom tool, when the call is checked with its declared effect and paths, then the rules judge those', async () => {
    const guard = genRulesGuard({ allow: ['write(docs/**)'] });
    const publish = call('publish_note', { to: 'docs/a.md' });
    const paths = [{ path: 'docs/a.md', access: 'write' as const }];
    expect(await BhrainPermission.check({ call: publish, guard, effect: 'write', paths }, { cwd: '/repo' })).toMatchObject({
      decision: 'allow',
    });
    expect(
      await BhrainPermission.check(
        { call: publish, guard, effect: 'write', paths: [{ path: 'src/a.ts', access: 'write' }] },
        { cwd: '/repo' },
      ),
    ).not.toMatchObject({ decision: 'allow' });
  });

  it('given a guard that throws, hangs or answers nonsense, when a call is checked, then it is denied and the reason says why', async () => {
    const throwing: BhrainPermissionGuard = {
      name: 'throws',
      check: () => {
        throw new Error('boom');
      },
    };
    const hanging: BhrainPermissionGuard = { name: 'hangs', check: () => new Promise(() => undefined) };
    const nonsense = { name: 'nonsense', check: () => ({ decision: 'maybe' }) } as unknown as BhrainPermissionGuard;
    expect(await BhrainPermission.check({ call: write, guard: throwing })).toEqual({
      decision: 'deny',
      reason: 'the permission guard failed (boom); guards fail closed',
    });
    expect(await BhrainPermission.check({ call: write, guard: hanging }, { guardTimeoutMs: 50 })).toEqual({
      decision: 'deny',
      reason: "the permission guard failed (permission guard 'hangs' did not answer within 50 ms); guards fail closed",
    });
    expect(await BhrainPermission.check({ call: write, guard: nonsense })).toMatchObject({
      decision: 'deny',
      reason: expect.stringContaining('not a decision of allow, deny or prompt'),
    });
  });
});

describe('BhrainPermission.promptUser: the context’s prompter approves one call', () => {
  // docs/design/loop.md#permission
  it('given a prompter, when it answers yes, always or no, then promptUser is true, true, false, and the prompter saw the call and reason', async () => {
    const asked: string[] = [];
    const answering = (answer: boolean | 'always') => async (input: { call: BrainToolCall; reason: string }) => {
      asked.push(`${input.call.name}: ${input.reason}`);
      return answer;
    };
    expect(await BhrainPermission.promptUser({ call: write, reason: 'writes notes.md' }, { prompter: answering(true) })).toBe(true);
    expect(await BhrainPermission.promptUser({ call: write }, { prompter: answering('always') })).toBe(true);
    expect(await BhrainPermission.promptUser({ call: write }, { prompter: answering(false) })).toBe(false);
    expect(asked).toEqual(['write: writes notes.md', 'write: write needs approval', 'write: write needs approval']);
  });

  it('given no prompter (CI, a pipe), when a call is prompted, then it is not approved', async () => {
    expect(await BhrainPermission.promptUser({ call: write }, {})).toBe(false);
  });

  it('given a prompter that fails, when a call is prompted, then its error reaches the caller', async () => {
    const failing = async () => {
      throw new Error('no terminal');
    };
    await expect(BhrainPermission.promptUser({ call: write }, { prompter: failing })).rejects.toThrow('no terminal');
  });
});

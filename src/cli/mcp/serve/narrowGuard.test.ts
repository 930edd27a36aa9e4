import { describe, expect, it } from 'vitest';

import { allowAll, promptForWrites, readOnly } from '../../../agent/permission/builtinGuards.js';
import { genRulesGuard } from '../../../agent/permission/genRulesGuard.js';
import { narrowGuard } from './narrowGuard.js';

const cwd = '/work/repo';
const call = (name: string, input: Record<string, unknown>) => ({ call: { id: 'c1', name, input } });

describe('mcp serve: a client permission narrows the server guard, never loosens it', () => {
  it('a deny from either guard denies, with its reason; an allow needs both', async () => {
    const server = genRulesGuard({ allow: ['read', 'write(src/**)'], deny: ['bash(rm *)'] }, 'rules(server)');
    const narrowed = narrowGuard(server, allowAll);
    // the client allows everything: the server's deny stands
    expect(await narrowed.check(call('bash', { command: 'rm -rf src' }), { cwd })).toMatchObject({ decision: 'deny' });
    expect(await narrowed.check(call('write', { path: 'src/a.ts', content: 'x' }), { cwd })).toMatchObject({ decision: 'allow' });
    // the client is read-only: the server's allowed write is denied by the client's reason
    const readOnlyClient = narrowGuard(server, readOnly);
    const denied = await readOnlyClient.check(call('write', { path: 'src/a.ts', content: 'x' }), { cwd });
    expect(denied.decision).toBe('deny');
    expect(denied.reason).toMatch(/read-only/);
    expect(await readOnlyClient.check(call('read', { path: 'src/a.ts' }), { cwd })).toEqual({ decision: 'allow' });
  });

  it('a prompt from either guard prompts (a denial without a terminal), even where the other allows', async () => {
    expect((await narrowGuard(allowAll, promptForWrites).check(call('bash', { command: 'touch x' }), { cwd })).decision).toBe('prompt');
    expect((await narrowGuard(promptForWrites, allowAll).check(call('bash', { command: 'touch x' }), { cwd })).decision).toBe('prompt');
    // a deny beats a prompt
    expect((await narrowGuard(promptForWrites, readOnly).check(call('bash', { command: 'touch x' }), { cwd })).decision).toBe('deny');
  });

  it('a protected path is allowed only when both guards name it exactly; a path is handed back from the hidden ones only when both hand it back', async () => {
    const exact = genRulesGuard({ allow: ['write(.vscode/settings.json)', 'read(~/.aws/config)'] }, 'rules(exact)');
    const wide = genRulesGuard({ allow: ['write(**)', 'read(~/.aws/config)'] }, 'rules(wide)');
    const input = call('write', { path: '.vscode/settings.json', content: '{}' });
    expect(await narrowGuard(exact, exact).check(input, { cwd })).toEqual({ decision: 'allow', namedExactly: true });
    expect(await narrowGuard(exact, wide).check(input, { cwd })).toEqual({ decision: 'allow' });
    expect(exact.allowRead!.length).toBeGreaterThan(0);
    expect(narrowGuard(exact, wide).allowRead).toEqual(exact.allowRead);
    expect(narrowGuard(exact, readOnly).allowRead).toEqual([]);
  });

  it('a guard that answers nonsense makes the check throw, so the session denies (fail closed), never an allow', async () => {
    const nonsense = { name: 'nonsense', check: async () => ({ decision: 'maybe' }) as never };
    await expect(narrowGuard(allowAll, nonsense).check(call('read', { path: 'a' }), { cwd })).rejects.toThrow(/not a decision/);
  });
});

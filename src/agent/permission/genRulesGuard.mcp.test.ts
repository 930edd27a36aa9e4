// permission rules match MCP tools by name with globs (`mcp__github__*`); an MCP tool is judged whole
import { describe, expect, it } from 'vitest';

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { genRulesGuard, type BhrainPermissionRules } from './genRulesGuard.js';

const judge = (rules: BhrainPermissionRules, name: string, input: Record<string, unknown> = {}) =>
  genRulesGuard(rules).check({ call: { id: 'c1', name, input } as BrainToolCall }, { cwd: '/tmp' });

describe('permissions: MCP tools by name, with globs', () => {
  it("permissions: a deny glob `mcp__github__*` denies every tool of that server and no other server's", async () => {
    const rules = { allow: ['mcp__*'], deny: ['mcp__github__*'] };
    expect(await judge(rules, 'mcp__github__create_issue', { title: 'x' })).toEqual({
      decision: 'deny',
      reason: 'denied by rule `mcp__github__*` (mcp__github__create_issue)',
    });
    expect(await judge(rules, 'mcp__gitlab__create_issue')).toEqual({ decision: 'allow' });
    // `mcp__github__*` must not reach a server whose name only starts the same way
    expect(await judge(rules, 'mcp__github2__x')).toEqual({ decision: 'allow' });
  });

  it("a rule `mcp__<server>` names every tool of that server, as in Claude Code, and no other server's", async () => {
    const rules = { allow: ['mcp__*'], deny: ['mcp__github'] };
    expect(await judge(rules, 'mcp__github__create_issue')).toEqual({
      decision: 'deny',
      reason: 'denied by rule `mcp__github` (mcp__github__create_issue)',
    });
    expect(await judge(rules, 'mcp__github2__x')).toEqual({ decision: 'allow' });
  });

  it('permissions: an MCP tool no rule allows is prompted, with the rule that would allow it', async () => {
    expect(await judge({ allow: ['mcp__everything__echo'] }, 'mcp__everything__echo')).toEqual({ decision: 'allow' });
    expect(await judge({ allow: ['mcp__everything__echo'] }, 'mcp__everything__get-sum', { a: 1 })).toEqual({
      decision: 'prompt',
      reason:
        'no rule allows mcp__everything__get-sum (MCP tools run outside the sandbox: allow them with a rule such as `mcp__everything__get-sum` or `mcp__everything__*`)',
    });
    expect(await judge({ allow: ['read'], prompt: ['mcp__everything__{echo,get-sum}'] }, 'mcp__everything__get-sum')).toMatchObject({
      decision: 'prompt',
      reason: 'rule `mcp__everything__{echo,get-sum}` asks for approval (mcp__everything__get-sum)',
    });
  });

  it('permissions: an MCP tool takes whole-tool rules only: a spec on an mcp__ rule fails at load, a glob rule with a spec never matches one', async () => {
    expect(() => genRulesGuard({ deny: ['mcp__github__create_issue(repo=x)'] })).toThrow(BadRequestError);
    expect(() => genRulesGuard({ deny: ['mcp__github__create_issue(repo=x)'] })).toThrow(
      "invalid permission rule 'mcp__github__create_issue(repo=x)': MCP tools take whole-tool rules only (their input has no path or command to match); write `mcp__github__create_issue`",
    );
    // `(*)` is a whole-tool rule, as it is for other tools
    expect(await judge({ allow: ['mcp__github__create_issue(*)'] }, 'mcp__github__create_issue')).toEqual({ decision: 'allow' });
    expect(await judge({ allow: ['*(src/**)'] }, 'mcp__github__create_issue', { path: 'src/a.ts' })).toMatchObject({ decision: 'prompt' });
  });

  it('permissions: a glob names built-in tools too: `*` in deny denies bash and write; `{read,grep}` allows both', async () => {
    expect(await judge({ allow: ['bash'], deny: ['*'] }, 'bash', { command: 'ls' })).toMatchObject({
      decision: 'deny',
      reason: 'denied by rule `*` (ls)',
    });
    expect(await judge({ deny: ['*'] }, 'write', { path: 'a.txt', content: '' })).toMatchObject({ decision: 'deny' });
    expect(await judge({ allow: ['{read,grep}'] }, 'grep', { pattern: 'x', path: '.' })).toEqual({ decision: 'allow' });
    expect(await judge({ allow: ['{read,grep}'] }, 'glob', { pattern: '*' })).toMatchObject({ decision: 'prompt' });
  });
});

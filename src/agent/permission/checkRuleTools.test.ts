import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

import { BadRequestError } from '../../core/contract/errors.js';
import { genBhrain } from '../genBhrain.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { defineTool } from '../tool/defineTool.js';
import { toolBoxOf } from '../tool/executeTool.js';
import { genToolset } from '../toolboxes/genToolset.js';
import { findUnmatchedMcpDenyRules } from './findUnmatchedMcpDenyRules.js';
import { genRulesGuard, type BhrainPermissionRules } from './genRulesGuard.js';

/** a custom toolbox with one tool, deploy */
const deployBox = toolBoxOf({
  name: 'ops',
  tools: [
    defineTool({
      name: 'deploy',
      description: 'deploys',
      input: z.strictObject({}),
      effect: 'exec',
      execute: async () => ({ success: true, output: 'deployed' }),
    }),
  ],
});

/** a toolbox that stands where an MCP server's would: its `server` names it, its tools are mcp__<server>__<tool> */
const mcpBox = (server: string, tools: string[]): BhrainToolBox & { server: string } => ({
  name: `mcp:${server}`,
  server,
  definitions: tools.map((tool) => ({
    name: `mcp__${server}__${tool}`,
    description: tool,
    inputSchema: { type: 'object', properties: {} },
  })),
  execute: async ({ call }) => ({ callId: call.id, success: true, output: '' }),
});

/** .what = a brain configured with these rules over the default tools, the deploy box and a github server's box */
const configure = (rules: BhrainPermissionRules, toolBoxes?: BhrainToolBox[]) =>
  genBhrain({
    atom: 'claude/haiku',
    toolBoxes: toolBoxes ?? [...genToolset({ access: 'all' }), deployBox, mcpBox('github', ['create_issue', 'delete_repo'])],
    permissionGuard: genRulesGuard(rules, 'rules(team.json)'),
  });

describe('a permission rule that names no tool of the run is refused when the brain is configured', () => {
  it("then `bsh(rm *)` in deny is a BadRequestError naming the rule, its kind, where it came from, and 'did you mean bash'", () => {
    expect(() => configure({ allow: ['bash'], deny: ['bsh(rm *)'] })).toThrow(BadRequestError);
    expect(() => configure({ allow: ['bash'], deny: ['bsh(rm *)'] })).toThrow(
      "permission rule 'bsh(rm *)' (deny, from the guard 'rules(team.json)') names no tool: did you mean 'bash'? the tools are bash, deploy, edit, glob, grep, read, skill, task, websearch, write, and MCP tools as mcp__<server>__<tool>. A rule that names nothing judges nothing (a deny would deny nothing): fix or remove it",
    );
  });

  it('then every rule that names nothing is named at once, a glob that matches no tool too', () => {
    expect(() => configure({ allow: ['reed', 'deploi'], prompt: ['web*fetch'] })).toThrow(
      /^permission rule 'web\*fetch' \(prompt, .+\) names no tool: the tools are .+; permission rule 'reed' \(allow, .+\) names no tool: did you mean 'read'\? .+; permission rule 'deploi' \(allow, .+\) names no tool: did you mean 'deploy'\?/,
    );
  });

  it("then a rule naming an MCP server the run does not have is refused, with the server it is nearest; one of a server's tools is left to the server's start", () => {
    expect(() => configure({ deny: ['mcp__gihub__delete_repo'] })).toThrow(
      "permission rule 'mcp__gihub__delete_repo' (deny, from the guard 'rules(team.json)') names the MCP server 'gihub', which this run does not configure: did you mean 'github'? its MCP servers are github.",
    );
    expect(() => configure({ deny: ['mcp__github__no_such_tool', 'mcp__github'] })).not.toThrow();
  });

  it("then what rules named before stays accepted: Claude Code's spellings (Bash, Read, WebSearch), the run's own tools, globs that match one, mcp__* with no server", () => {
    for (const rules of [
      { allow: ['Bash(npm test*)', 'Read', 'WebSearch', 'Write(src/**)', 'Edit', 'Glob', 'Grep', 'Task', 'Skill'] },
      { allow: ['deploy', '*', '{read,grep}', '*(src/**)'], deny: ['mcp__*', 'mcp__git*__delete_*'] },
    ])
      expect(() => configure(rules)).not.toThrow();
    // a built-in tool is accepted where the run does not offer it: a shared rules file may name bash for a files-only brain
    expect(() => configure({ deny: ['bash(rm *)'], allow: ['mcp__*'] }, [deployBox])).not.toThrow();
  });

  it("then a guard set at runtime is checked against the brain's toolboxes too", () => {
    const brain = configure({ allow: ['read'] });
    expect(() => brain.permissionGuard.set(genRulesGuard({ deny: ['writ(.env)'] }, 'rules(later)'))).toThrow(/did you mean 'write'\?/);
    expect(brain.permissionGuard.get().name).toBe('rules(team.json)');
  });
});

describe('a deny rule naming a tool its started MCP server does not list is a warning', () => {
  const rules = genRulesGuard({ deny: ['mcp__everything__ech', 'mcp__everything__echo', 'mcp__other__x', 'mcp__*__nothing'] }).rules;
  it('then it names the rule, where it came from, the nearest tool and the tools; a rule that matches, or of another server, is silent', () => {
    expect(
      findUnmatchedMcpDenyRules({
        rules,
        server: 'everything',
        toolNames: ['mcp__everything__echo', 'mcp__everything__add'],
        origin: 'rules.json',
      }),
    ).toEqual([
      "deny rule 'mcp__everything__ech' (from rules.json) matches no tool of MCP server 'everything', so it denies nothing: did you mean 'mcp__everything__echo'? its tools are mcp__everything__echo, mcp__everything__add",
    ]);
  });
});

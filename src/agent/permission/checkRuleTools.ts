import picomatch from 'picomatch';

import { BadRequestError } from '../../core/contract/errors.js';
import { didYouMean } from '../../core/text/findNearestName.js';
import { SKILL_TOOL_NAME, TASK_TOOL_NAME } from '../constants.js';
import { BHRAIN_TOOL_EFFECTS } from '../tool/makeTool.js';
import type { BhrainPermissionRule } from './BhrainPermissionGuard.js';
import { genRuleToolMatcher, MCP_TOOL_PREFIX, mcpServerOfRule } from './genRulesGuard.js';
import { namesOfBuiltinTools } from './readCallEffect.js';

/** .what = bhrain's built-in tools, whether a run offers them or not: files, bash, websearch, the task and skill tools */
const builtinToolNames = (): string[] => [...BHRAIN_TOOL_EFFECTS.flatMap(namesOfBuiltinTools), TASK_TOOL_NAME, SKILL_TOOL_NAME];

/** .what = why a rule names nothing a run has, or null when it names a tool (or, for an MCP rule, a configured server) */
const whyNamesNothing = (rule: BhrainPermissionRule, known: { tools: readonly string[]; servers: readonly string[] }): string | null => {
  const server = mcpServerOfRule(rule.tool);
  if (server !== null) {
    // a pattern over servers (`mcp__*`) may name none today; a server named outright must be one the run configures.
    // Its tools are checked when it starts (findUnmatchedMcpDenyRules)
    if (picomatch.scan(server).isGlob || known.servers.some((each) => each.toLowerCase() === server)) return null;
    return `names the MCP server '${server}', which this run does not configure: ${didYouMean(server, known.servers)}${known.servers.length ? `its MCP servers are ${known.servers.join(', ')}` : 'it configures no MCP server'}`;
  }
  const named = genRuleToolMatcher(rule.tool);
  const tools = known.tools.filter((tool) => !tool.startsWith(MCP_TOOL_PREFIX));
  if (known.tools.some(named)) return null;
  return `names no tool: ${didYouMean(rule.tool, tools)}the tools are ${tools.join(', ')}, and MCP tools as mcp__<server>__<tool>`;
};

/**
 * .what = refuses permission rules that name no tool of a run: a tool name that is not a built-in tool (in any case:
 *         `Bash` is `bash`) nor one of the run's own, a glob that matches none, an MCP rule whose server the run does
 *         not configure; the error names each such rule, its kind, where it came from, and a "did you mean"
 * .why = a rule that names nothing judges nothing: `{"deny": ["bsh(rm *)"]}` let `rm` run, silently. Checked once the
 *        run's tools are known (genRulesGuard cannot know them): the library's config check, the CLI before any request
 */
export const checkRuleTools = (input: {
  rules: readonly BhrainPermissionRule[];
  /** the names of the tools the run offers (its toolboxes'), besides the built-in ones */
  toolNames: readonly string[];
  /** the MCP servers the run configures, by name */
  mcpServers: readonly string[];
  /** where the rules came from, as the user names it: `--permission rules.json`, a settings file */
  origin: string;
}): void => {
  const known = { tools: [...new Set([...builtinToolNames(), ...input.toolNames])].sort(), servers: [...input.mcpServers] };
  const wrong = input.rules.flatMap((rule) => {
    const why = whyNamesNothing(rule, known);
    return why ? [`permission rule '${rule.text}' (${rule.kind}, from ${input.origin}) ${why}`] : [];
  });
  if (wrong.length)
    throw new BadRequestError(
      `${wrong.join('; ')}. A rule that names nothing judges nothing (a deny would deny nothing): fix or remove it`,
    );
};

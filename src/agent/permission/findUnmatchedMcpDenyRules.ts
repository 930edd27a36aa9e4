import { didYouMean } from '../../core/text/findNearestName.js';
import type { BhrainPermissionRule } from './BhrainPermissionGuard.js';
import { genRuleToolMatcher, mcpServerOfRule } from './genRulesGuard.js';

/** the tools of a server a warning lists at most; the rest are counted */
const MAX_TOOLS_LISTED = 20;

/**
 * .what = the warnings for the deny rules that name a started MCP server outright (`mcp__github__delete_repo`) and
 *         match none of the tools it lists: each names the rule, where it came from, the server's tools, and a "did
 *         you mean"
 * .why = an MCP tool is known only once its server answers tools/list: a deny rule for a tool it does not have denies
 *        nothing. A warning, not an error: a server's tools change between versions and over a run
 */
export const findUnmatchedMcpDenyRules = (input: {
  rules: readonly BhrainPermissionRule[];
  server: string;
  /** the server's tools as offered, mcp__<server>__<tool> */
  toolNames: readonly string[];
  origin: string;
}): string[] =>
  input.rules
    .filter((rule) => rule.kind === 'deny' && mcpServerOfRule(rule.tool) === input.server.toLowerCase())
    .filter((rule) => !input.toolNames.some(genRuleToolMatcher(rule.tool)))
    .map((rule) => {
      const listed =
        input.toolNames.length > MAX_TOOLS_LISTED
          ? `${input.toolNames.slice(0, MAX_TOOLS_LISTED).join(', ')} and ${input.toolNames.length - MAX_TOOLS_LISTED} more`
          : input.toolNames.join(', ') || 'none';
      return `deny rule '${rule.text}' (from ${input.origin}) matches no tool of MCP server '${input.server}', so it denies nothing: ${didYouMean(rule.tool, input.toolNames)}its tools are ${listed}`;
    });

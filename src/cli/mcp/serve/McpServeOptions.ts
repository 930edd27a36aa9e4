import type { SkillOptions } from '../../genSkillCommand.js';

/** .what = the flags of `bhrain mcp serve` that are not settings: the root, and what every run it hosts shares */
export interface McpServeOptions extends Pick<SkillOptions, 'trustProject' | 'subagents' | 'record' | 'debug'> {
  /** the directory the calls' cwd must lie within; the server's own cwd when absent */
  root?: string;
}

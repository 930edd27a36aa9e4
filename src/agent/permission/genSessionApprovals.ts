import { isAbsolute, relative, resolve } from 'node:path';

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { analyzeShellCommand } from '../../shell-analysis/analyzeShellCommand.js';
import type { BhrainPermissionDecision } from './BhrainPermissionGuard.js';
import { genRulesGuard } from './genRulesGuard.js';

/** tools whose input path is what a remembered approval names: `write(src/a.ts)`, never a wider glob */
const PATH_TOOLS: ReadonlySet<string> = new Set(['read', 'write', 'edit', 'glob', 'grep']);
/** characters that would make a derived spec a wildcard or glob, so it would cover more than the call asked about */
const WIDENING = /[*?[\]{}!\\]/;

/**
 * .what = the approvals a person gave with "yes, and don't ask again" in one session: rule patterns such as
 *         `bash(npm test*)`, held in memory only, and the patterns a prompt may offer to remember
 * .why = seed 002 open question 5. A remembered pattern is judged as an allow rule (genRulesGuard), so it covers exactly
 *        what that rule would allow: `bash(npm test*)` covers `npm test -- x` but not `npm test; npm publish`, nor a line
 *        the shell analysis cannot read. It is consulted only where the guard said prompt, so a deny still denies
 */
export interface BhrainSessionApprovals {
  /** the patterns a remembered 'always' would add for this prompt; empty when none would cover this very call */
  offer: (input: { call: BrainToolCall; decision: BhrainPermissionDecision; cwd: string }) => Promise<readonly string[]>;
  /** remembers patterns for the rest of the session */
  remember: (patterns: readonly string[]) => void;
  /** whether a remembered pattern allows this call */
  covers: (input: { call: BrainToolCall; cwd: string }) => Promise<boolean>;
  /** the patterns remembered so far, in the order given */
  patterns: () => readonly string[];
}

/** .what = whether allow rules made of these patterns allow the call; a pattern that is not a valid rule allows nothing */
const allowedBy = async (patterns: readonly string[], call: BrainToolCall, cwd: string): Promise<boolean> => {
  if (!patterns.length) return false;
  try {
    const verdict = await genRulesGuard({ allow: patterns }, 'remembered approvals').check({ call }, { cwd });
    return verdict.decision === 'allow';
  } catch {
    return false;
  }
};

/** .what = `program first-word*` for each command a bash line runs, or nothing when a word would widen the pattern */
const deriveBashPatterns = async (command: string): Promise<string[]> => {
  const analysis = await analyzeShellCommand({ command });
  // what the analysis cannot read, no pattern can be promised to cover
  if (analysis.unreadable.length) return [];
  const patterns = analysis.commands
    .filter((each) => !each.transparent)
    .map((each) => [...each.env, ...each.words].slice(0, 2))
    .filter((words) => words.length > 0);
  if (patterns.some((words) => words.some((word) => WIDENING.test(word) || /[()\n]/.test(word)))) return [];
  return [...new Set(patterns.map((words) => `bash(${words.join(' ')}*)`))];
};

/** .what = `tool(path)` with the path as the rules see it: relative to the working directory when inside it */
const derivePathPattern = (tool: string, path: string, cwd: string): string[] => {
  const absolute = resolve(cwd, path);
  const inside = relative(resolve(cwd), absolute);
  const shown = inside === '..' || inside.startsWith('../') || isAbsolute(inside) ? absolute : inside || '.';
  return WIDENING.test(shown) || /[()\n]/.test(shown) ? [] : [`${tool}(${shown})`];
};

/**
 * .what = the patterns "don't ask again" would remember for a prompted call: the prompting rule's pattern when a rule
 *         asked; otherwise derived: bash → the program and its first word + `*` for each command of the line
 *         (`bash(npm test*)`), file tools → the exact path (`write(src/a.ts)`), any other tool → its name
 */
const derivePatterns = async (call: BrainToolCall, decision: BhrainPermissionDecision, cwd: string): Promise<string[]> => {
  if (decision.pattern) return [decision.pattern];
  const tool = call.name.toLowerCase();
  if (tool === 'bash') return typeof call.input.command === 'string' ? deriveBashPatterns(call.input.command) : [];
  if (PATH_TOOLS.has(tool)) return derivePathPattern(tool, typeof call.input.path === 'string' ? call.input.path : '.', cwd);
  return [call.name];
};

/**
 * .what = a fresh, empty set of remembered approvals, for one session (one invoke)
 * .why = kept in memory only and never written to disk; a new session starts asking again
 */
export const genSessionApprovals = (): BhrainSessionApprovals => {
  const remembered: string[] = [];
  return {
    offer: async ({ call, decision, cwd }) => {
      const patterns = await derivePatterns(call, decision, cwd).catch(() => []);
      // offered only when remembering them would spare this very call the question: no promise the memory cannot keep
      return (await allowedBy(patterns, call, cwd)) ? patterns : [];
    },
    remember: (patterns) => {
      for (const pattern of patterns) if (!remembered.includes(pattern)) remembered.push(pattern);
    },
    covers: ({ call, cwd }) => allowedBy(remembered, call, cwd),
    patterns: () => [...remembered],
  };
};

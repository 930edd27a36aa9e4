import { isAbsolute, relative, resolve } from 'node:path';

import { analyzeShellCommand } from '../../shell-analysis/analyzeShellCommand.js';
import type { BhrainPermissionCheck, BhrainPermissionDecision } from './BhrainPermissionGuard.js';
import { genRulesGuard } from './genRulesGuard.js';
import { readCallEffect } from './readCallEffect.js';

/** characters that would make a derived spec a wildcard or glob, so it would cover more than the call asked about */
const WIDENING = /[*?[\]{}!\\]/;

/**
 * .what = the approvals a person gave with "yes, and don't ask again" in one session: rule patterns such as
 *         `bash(npm test*)`, held in memory only, and the patterns a prompt may offer to remember
 * .why = approvals remembered for the session (docs/design/loop.md#permission). A remembered pattern is judged as an allow rule (genRulesGuard), so it covers exactly
 *        what that rule would allow: `bash(npm test*)` covers `npm test -- x` but not `npm test; npm publish`, nor a line
 *        the shell analysis cannot read. It is consulted only where the guard said prompt, so a deny still denies
 */
export interface BhrainSessionApprovals {
  /** the patterns a remembered 'always' would add for this prompt; empty when none would cover this very call */
  offer: (input: BhrainPermissionCheck & { decision: BhrainPermissionDecision; cwd: string }) => Promise<readonly string[]>;
  /** remembers patterns for the rest of the session */
  remember: (patterns: readonly string[]) => void;
  /** whether a remembered pattern allows this call */
  covers: (input: BhrainPermissionCheck & { cwd: string }) => Promise<boolean>;
  /** the patterns remembered so far, in the order given */
  patterns: () => readonly string[];
}

/** .what = whether allow rules made of these patterns allow the call; a pattern that is not a valid rule allows nothing */
const allowedBy = async (patterns: readonly string[], checked: BhrainPermissionCheck, cwd: string): Promise<boolean> => {
  if (!patterns.length) return false;
  try {
    const { call, effect, paths } = checked;
    const verdict = await genRulesGuard({ allow: patterns }, 'remembered approvals').check({ call, effect, paths }, { cwd });
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
 *         (`bash(npm test*)`), a tool that touches paths → each exact path (`write(src/a.ts)`, a custom tool's too), any
 *         other tool → its name
 */
const derivePatterns = async (checked: BhrainPermissionCheck, decision: BhrainPermissionDecision, cwd: string): Promise<string[]> => {
  if (decision.pattern) return [decision.pattern];
  const { call } = checked;
  const tool = call.name.toLowerCase();
  if (tool === 'bash') return typeof call.input.command === 'string' ? deriveBashPatterns(call.input.command) : [];
  const { paths } = await readCallEffect(checked, { cwd });
  if (paths.length) {
    const patterns = paths.map(({ path }) => derivePathPattern(tool, path, cwd));
    // one path that cannot be named exactly: no pattern is offered, rather than one that covers part of the call
    return patterns.every((each) => each.length) ? [...new Set(patterns.flat())] : [];
  }
  return [call.name];
};

/**
 * .what = a fresh, empty set of remembered approvals, for one session (one invoke)
 * .why = kept in memory only and never written to disk; a new session starts asking again
 */
export const genSessionApprovals = (): BhrainSessionApprovals => {
  const remembered: string[] = [];
  return {
    offer: async ({ decision, cwd, ...checked }) => {
      const patterns = await derivePatterns(checked, decision, cwd).catch(() => []);
      // offered only when remembering them would spare this very call the question: no promise the memory cannot keep
      return (await allowedBy(patterns, checked, cwd)) ? patterns : [];
    },
    remember: (patterns) => {
      for (const pattern of patterns) if (!remembered.includes(pattern)) remembered.push(pattern);
    },
    covers: ({ cwd, ...checked }) => allowedBy(remembered, checked, cwd),
    patterns: () => [...remembered],
  };
};

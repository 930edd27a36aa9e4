import type { BhrainPermissionGuard } from '../../agent/permission/BhrainPermissionGuard.js';
import type { RunSink } from './RunSink.js';

/**
 * .what = a run hosted by another program in this process (`bhrain mcp serve`): where it works, its task, what stops it,
 *         where its events go, and how the host narrows its budgets and its guard
 * .why = the host runs a skill through this same path (settings, sandbox, budgets, records, refs), never a second
 *        assembly; its stdin and stdout are the host's channel, so a hosted run reads neither, writes nothing to stdout,
 *        registers no signal handler, and never prompts (as the CLI without a terminal)
 */
export interface SkillHost {
  /** the run's working directory (the CLI's is process.cwd()) */
  cwd: string;
  /** the task, as given: stdin is never read */
  prompt: string;
  /** aborted: the run stops as on Ctrl-C (its tools killed, its refs saved, termination interrupted) */
  signal: AbortSignal;
  /** the host's own output of the run (mcp serve: progress notifications): its events unredacted (the host redacts what it shows) */
  sink?: RunSink;
  /** caps over the resolved settings: each one only lowers a budget (a lower one of the settings stays) */
  limits?: { maxIterations?: number; maxBudgetUsd?: number; maxTokens?: number; maxWallTime?: number };
  /** the run's guard, from the settings, given back narrowed: the host may only tighten it */
  narrowGuard?: (guard: BhrainPermissionGuard) => BhrainPermissionGuard;
}

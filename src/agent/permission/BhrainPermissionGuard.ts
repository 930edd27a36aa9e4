import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import type { BhrainToolEffect, BhrainToolPath } from '../tool/defineTool.js';

/** .what = a guard's verdict on one tool call */
export interface BhrainPermissionDecision {
  decision: 'allow' | 'deny' | 'prompt';
  reason?: string;
  /** on a prompt: the rule that asked (e.g. `bash(npm test*)`), which "don't ask again this session" remembers */
  pattern?: string;
  /**
   * on an allow of a write or edit: every place the file change lands was allowed by a rule that names that path exactly
   * (no wildcard), e.g. `write(.vscode/settings.json)`; only such a rule lets write and edit change a protected path
   */
  namedExactly?: boolean;
}

/**
 * .what = what a guard judges: the call (the plain `check({ call })`, docs/design/loop.md#permission), and what the call's tool declares it does: its
 *         effect and the files this call touches
 * .why = a guard judges by what a call does, not by its tool's name, so custom and MCP tools are judged as built-in
 *        ones are. The session always tells effect and paths (effect null = unknown); a caller of the plain shape
 *        passes only { call }, and the built-in guards then read both from bhrain's built-in tools by the call's name
 *        (readCallEffect), any other tool being effect-unknown with no paths
 */
export interface BhrainPermissionCheck {
  call: BrainToolCall;
  /** what the call's tool does: read, write, exec, network, delegate; null = unknown ("may change anything"); absent = not told */
  effect?: BhrainToolEffect | null;
  /** the files this call touches, each read or written, as its tool's paths() named them; absent = not told */
  paths?: readonly BhrainToolPath[];
}

/** .what = one rule of a rules guard as written, with its kind: what checkRuleTools reads to tell a rule that names nothing */
export interface BhrainPermissionRule {
  kind: 'allow' | 'prompt' | 'deny';
  text: string;
  /** the tool name or glob as written, lower-cased */
  tool: string;
}

/** .what = what a guard may consult besides the call: where the session works */
export interface BhrainPermissionContext {
  cwd: string;
}

/**
 * .what = the security policy plugin, consulted before every tool execution
 * .why = policy is pluggable; the core fails closed around it (a guard that throws or hangs denies)
 */
export interface BhrainPermissionGuard {
  name: string;
  /**
   * paths the guard's rules hand back from those hidden from the model (the credential stores, $BHRAIN_HOME,
   * sandbox.denyRead): genRulesGuard lists each `read(<path>)` allow rule's path here; the default toolboxes are built
   * with them (BhrainConfig readDenialOf)
   */
  allowRead?: readonly string[];
  /**
   * the rules a rules guard judges by (genRulesGuard lists each, with its kind and tool): the config check refuses one
   * that names no tool of the run (checkRuleTools); absent for a guard without rules
   */
  rules?: readonly BhrainPermissionRule[];
  check: (input: BhrainPermissionCheck, context: BhrainPermissionContext) => BhrainPermissionDecision | Promise<BhrainPermissionDecision>;
}

/**
 * .what = the user's answer to a prompt: true = allow once, false = deny, 'always' = allow, and allow the calls the
 *         offered patterns cover for the rest of this session without asking
 * .why = approvals remembered for the session (docs/design/loop.md#permission); a boolean stays a valid answer, so prompters written before keep working
 */
export type BhrainPromptAnswer = boolean | 'always';

/**
 * .what = asks the user to approve one call; `remember` lists the rule patterns 'always' would remember (empty: 'always'
 *         is not offered, and counts as a one-time yes)
 * .why = injected through context: a TTY prompt in the CLI, a callback in a library, absent in CI (then prompt = deny)
 */
export type BhrainPrompter = (input: { call: BrainToolCall; reason: string; remember: readonly string[] }) => Promise<BhrainPromptAnswer>;

import type { BrainToolCall } from '../../../contract/BrainMessage.js';

/** .what = a guard's verdict on one tool call */
export interface BhrainPermissionDecision {
  decision: 'allow' | 'deny' | 'prompt';
  reason?: string;
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
  check: (
    input: { call: BrainToolCall },
    context: BhrainPermissionContext,
  ) => BhrainPermissionDecision | Promise<BhrainPermissionDecision>;
}

/**
 * .what = asks the user to approve one call; resolves true to allow
 * .why = injected through context: a TTY prompt in the CLI, a callback in a library, absent in CI (then prompt = deny)
 */
export type BhrainPrompter = (input: { call: BrainToolCall; reason: string }) => Promise<boolean>;

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { DEFAULT_GUARD_TIMEOUT_MS } from '../constants.js';
import type { BhrainToolEffect, BhrainToolPath } from '../tool/defineTool.js';
import type { BhrainPermissionDecision, BhrainPermissionGuard, BhrainPrompter } from './BhrainPermissionGuard.js';

/** .what = resolves a promise, or rejects when it has not settled in time */
const within = <T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });

/**
 * .what = a guard's verdict on one call, or the reason it gave none: it threw, hung past the timeout, or answered
 *         something that is not a decision of allow, deny or prompt
 * .why = guards fail closed: the session (checkPermission) and BhrainPermission.check deny on every failure alike
 */
export const consultGuard = async (input: {
  call: BrainToolCall;
  guard: BhrainPermissionGuard;
  effect?: BhrainToolEffect | null;
  paths?: readonly BhrainToolPath[];
  cwd: string;
  timeoutMs: number;
}): Promise<{ decision: BhrainPermissionDecision } | { failed: Error }> => {
  const { call, guard } = input;
  try {
    const decision = await within(
      Promise.resolve().then(() => guard.check({ call, effect: input.effect, paths: input.paths }, { cwd: input.cwd })),
      input.timeoutMs,
      `permission guard '${guard.name}'`,
    );
    if (!['allow', 'deny', 'prompt'].includes(decision?.decision))
      throw new Error(`permission guard '${guard.name}' returned ${JSON.stringify(decision)}, not a decision of allow, deny or prompt`);
    return { decision };
  } catch (error) {
    return { failed: error instanceof Error ? error : new Error(String(error)) };
  }
};

/**
 * .what = BhrainPermission.check (docs/design/loop.md#permission): a guard's verdict on one call, failing closed (a guard that throws, hangs
 *         past guardTimeoutMs or answers nonsense is a deny whose reason says so)
 * .why = a caller can judge a call as the loop does before it runs one; effect and paths are what the call's tool declares
 *        (absent: the built-in guards read them from bhrain's own tools by name)
 */
const check = async (
  input: { call: BrainToolCall; guard: BhrainPermissionGuard; effect?: BhrainToolEffect | null; paths?: readonly BhrainToolPath[] },
  context: { cwd?: string; guardTimeoutMs?: number } = {},
): Promise<BhrainPermissionDecision> => {
  const consulted = await consultGuard({
    ...input,
    cwd: context.cwd ?? process.cwd(),
    timeoutMs: context.guardTimeoutMs ?? DEFAULT_GUARD_TIMEOUT_MS,
  });
  if ('decision' in consulted) return consulted.decision;
  return { decision: 'deny', reason: `the permission guard failed (${consulted.failed.message}); guards fail closed` };
};

/**
 * .what = BhrainPermission.promptUser (docs/design/loop.md#permission): asks the user to approve one call through the context's prompter;
 *         true only on a yes ('always' counts as yes); false when there is no prompter. A prompter that throws throws here
 *         (the loop makes that a denial saying so)
 * .why = approval needs someone to ask: without a prompter (CI, a pipe) a prompt is a denial, as in the loop
 */
const promptUser = async (
  input: { call: BrainToolCall; reason?: string },
  context: { prompter?: BhrainPrompter | null },
): Promise<boolean> => {
  if (!context.prompter) return false;
  const answer = await context.prompter({ call: input.call, reason: input.reason ?? `${input.call.name} needs approval`, remember: [] });
  return answer === true || answer === 'always';
};

/** .what = the BhrainPermission operations of docs/design/loop.md#permission: check and promptUser */
export const BhrainPermission = { check, promptUser };

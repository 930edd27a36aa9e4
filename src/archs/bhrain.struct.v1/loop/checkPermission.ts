import type { BrainLog } from '../../../contract/BrainContext.js';
import type { BrainToolCall } from '../../../contract/BrainMessage.js';
import type { BhrainPermissionDecision, BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import { findOutsideWorkspace } from '../permission/findOutsideWorkspace.js';

/** .what = whether a call may run, and if not, the denial the model reads */
export type PermissionVerdict = { allowed: true } | { allowed: false; denial: string };

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
 * .what = consults the guard for one call, and the prompter when the guard asks for approval
 * .why = fail closed: a guard that throws, hangs or answers nonsense denies; a prompt with no way to ask denies, saying so;
 *        a write or edit outside the workspace (../, absolute, a symlink pointing out) is always a prompt at least
 */
export const checkPermission = async (input: {
  call: BrainToolCall;
  guard: BhrainPermissionGuard;
  prompter: BhrainPrompter | null;
  cwd: string;
  guardTimeoutMs: number;
  log: BrainLog;
}): Promise<PermissionVerdict> => {
  const { call, guard } = input;
  let verdict: BhrainPermissionDecision;
  try {
    verdict = await within(Promise.resolve().then(() => guard.check({ call }, { cwd: input.cwd })), input.guardTimeoutMs, `permission guard '${guard.name}'`);
    if (!['allow', 'deny', 'prompt'].includes(verdict?.decision))
      throw new Error(`permission guard '${guard.name}' returned ${JSON.stringify(verdict)}, not a decision of allow, deny or prompt`);
  } catch (error) {
    input.log.error(`permission guard '${guard.name}' failed on ${call.name}; the call is denied`, { error: String(error), callId: call.id });
    return {
      allowed: false,
      denial: `permission denied: the permission guard failed (${(error as Error).message}), so ${call.name} was not run (guards fail closed). Try another approach, or ask the user.`,
    };
  }
  // whatever the guard says, a write or edit that lands outside the workspace is asked about, never silently allowed
  const outside = verdict.decision === 'deny' ? null : findOutsideWorkspace({ toolName: call.name, toolInput: call.input, cwd: input.cwd });
  if (outside) {
    const note = `${call.name} would change ${outside}, outside the workspace ${input.cwd}`;
    verdict = { decision: 'prompt', reason: verdict.decision === 'prompt' && verdict.reason ? `${verdict.reason}; ${note}` : note };
  }
  if (verdict.decision === 'allow') return { allowed: true };
  const reason = verdict.reason ?? `${call.name} needs approval`;
  if (verdict.decision === 'deny')
    return { allowed: false, denial: `permission denied: ${reason}. ${call.name} was not run; adjust your approach.` };
  if (!input.prompter)
    return {
      allowed: false,
      denial: `permission denied: ${reason}, and approval was needed but there is no way to ask the user (not an interactive terminal). ${call.name} was not run; proceed without it or explain what approval is needed.`,
    };
  try {
    if (await input.prompter({ call, reason })) return { allowed: true };
    return { allowed: false, denial: `permission denied: the user declined ${call.name} (${reason}). Do not retry it; take another approach.` };
  } catch (error) {
    input.log.error(`prompting the user for ${call.name} failed; the call is denied`, { error: String(error) });
    return { allowed: false, denial: `permission denied: asking the user for approval failed (${(error as Error).message}). ${call.name} was not run.` };
  }
};

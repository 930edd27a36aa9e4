import type { BhrainPermissionDecision, BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';

const DECISIONS = ['allow', 'deny', 'prompt'];

/**
 * .what = one guard that asks all of the given guards and keeps the strictest verdict: deny over prompt over allow
 * .why = a subagent's calls are judged by its own guard and by its parent's, so a child is never looser than its parent;
 *        an MCP client's permission narrows the server's the same way. A guard that throws or answers nonsense makes the
 *        whole check throw, and checkPermission denies (fail closed)
 * .note = namedExactly says whose rule naming a protected path exactly lets the write through: 'any' guard's (a child
 *         under its parent: the user's rule is in the parent's guard), or 'every' guard's (a client's rules must not
 *         open a path the server's settings do not name)
 */
export const combineGuards = (
  guards: readonly BhrainPermissionGuard[],
  options: { namedExactly: 'any' | 'every' } = { namedExactly: 'any' },
): BhrainPermissionGuard => ({
  name: guards.map((guard) => guard.name).join('+'),
  check: async (input, context) => {
    const verdicts: BhrainPermissionDecision[] = await Promise.all(guards.map((guard) => guard.check(input, context)));
    verdicts.forEach((verdict, index) => {
      if (!DECISIONS.includes(verdict?.decision))
        throw new Error(
          `permission guard '${guards[index].name}' returned ${JSON.stringify(verdict)}, not a decision of allow, deny or prompt`,
        );
    });
    const denied = verdicts.find((verdict) => verdict.decision === 'deny');
    if (denied) return denied;
    const prompts = verdicts.filter((verdict) => verdict.decision === 'prompt');
    // one guard asking keeps its verdict whole (its rule pattern is what "don't ask again" remembers); several asking are one
    // question with no single rule to remember
    if (prompts.length === 1) return prompts[0];
    if (prompts.length)
      return {
        decision: 'prompt',
        reason:
          prompts
            .map((verdict) => verdict.reason)
            .filter(Boolean)
            .join('; ') || undefined,
      };
    // all allow: a rule that names the file exactly counts as options.namedExactly says
    const named = (verdict: BhrainPermissionDecision) => verdict.namedExactly === true;
    const namedExactly = options.namedExactly === 'every' ? verdicts.every(named) : verdicts.some(named);
    return namedExactly ? { decision: 'allow', namedExactly: true } : { decision: 'allow' };
  },
});

import type { BhrainPermissionDecision, BhrainPermissionGuard } from '../permission/BhrainPermissionGuard.js';

const DECISIONS = ['allow', 'deny', 'prompt'];

/**
 * .what = one guard that asks all of the given guards and keeps the strictest verdict: deny over prompt over allow
 * .why = a subagent's calls are judged by its own guard and by its parent's, so a child is never looser than its parent;
 *        a guard that throws or answers nonsense makes the whole check throw, and checkPermission denies (fail closed)
 */
export const combineGuards = (guards: readonly BhrainPermissionGuard[]): BhrainPermissionGuard => ({
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
    // all allow: a rule of one of them that names the file exactly (the user's, in the parent's guard) still counts
    return verdicts.some((verdict) => verdict.namedExactly) ? { decision: 'allow', namedExactly: true } : { decision: 'allow' };
  },
});

import type { BhrainPermissionDecision, BhrainPermissionGuard } from '../../../agent/permission/BhrainPermissionGuard.js';

/**
 * .what = a guard that allows a call only when both guards allow it: a deny from either denies (with its reason), else
 *         a prompt from either prompts, else it allows
 * .why = an MCP client may ask for a tighter permission than the server's settings give, never a looser one: the run's
 *        guard is the settings' guard narrowed by the client's, so no client value can allow what the settings deny or
 *        would ask about. Without a terminal a prompt is a denial (the CLI's rule), so a prompt stays a prompt here
 */
export const narrowGuard = (settings: BhrainPermissionGuard, client: BhrainPermissionGuard): BhrainPermissionGuard => ({
  name: `${settings.name}+${client.name}`,
  // a path the rules hand back from the hidden ones only when both guards hand it back
  allowRead: (settings.allowRead ?? []).filter((path) => (client.allowRead ?? []).includes(path)),
  check: async (input, context) => {
    const [first, second] = await Promise.all([settings.check(input, context), client.check(input, context)]);
    const denied = [first, second].find((verdict) => verdict.decision === 'deny');
    if (denied) return denied;
    const prompted = [first, second].find((verdict) => verdict.decision === 'prompt');
    if (prompted) return prompted;
    const allowed: BhrainPermissionDecision = { decision: 'allow' };
    // a protected path is written only when both allowed it by a rule naming it exactly
    if (first.namedExactly && second.namedExactly) allowed.namedExactly = true;
    return allowed;
  },
});

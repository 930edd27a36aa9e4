import type { BhrainPermissionGuard } from '../../../agent/permission/BhrainPermissionGuard.js';
import { combineGuards } from '../../../agent/subagents/combineGuards.js';

/**
 * .what = a guard that allows a call only when both guards allow it: a deny from either denies (with its reason), else
 *         a prompt from either prompts, else it allows (combineGuards); a protected path only when both name it exactly
 * .why = an MCP client may ask for a tighter permission than the server's settings give, never a looser one: the run's
 *        guard is the settings' guard narrowed by the client's, so no client value can allow what the settings deny or
 *        would ask about. Without a terminal a prompt is a denial (the CLI's rule), so a prompt stays a prompt here
 */
export const narrowGuard = (settings: BhrainPermissionGuard, client: BhrainPermissionGuard): BhrainPermissionGuard => ({
  ...combineGuards([settings, client], { namedExactly: 'every' }),
  // a path the rules hand back from the hidden ones only when both guards hand it back
  allowRead: (settings.allowRead ?? []).filter((path) => (client.allowRead ?? []).includes(path)),
});

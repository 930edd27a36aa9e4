import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import { readCallEffect } from './readCallEffect.js';

/** .what = allows every call: the default, permissive for development (docs/design/loop.md#config-and-plugins) */
export const allowAll: BhrainPermissionGuard = {
  name: 'allowAll',
  check: () => ({ decision: 'allow' }),
};

/**
 * .what = allows only the calls whose tool's effect is read (read, glob, grep, websearch, an MCP tool its server marks
 *         readOnlyHint, a custom tool declared effect 'read'); everything else is denied
 */
export const readOnly: BhrainPermissionGuard = {
  name: 'readOnly',
  check: async (input, context) =>
    (await readCallEffect(input, context)).effect === 'read'
      ? { decision: 'allow' }
      : {
          decision: 'deny',
          reason: `${input.call.name} is not allowed: this session is read-only (only tools that only read may run, such as read, glob, grep and websearch)`,
        },
};

/** .what = allows the calls whose tool's effect is read; asks before every other call (write, exec, network, delegate, unknown) */
export const promptForWrites: BhrainPermissionGuard = {
  name: 'promptForWrites',
  check: async (input, context) =>
    (await readCallEffect(input, context)).effect === 'read'
      ? { decision: 'allow' }
      : { decision: 'prompt', reason: `${input.call.name} may change files or run commands` },
};

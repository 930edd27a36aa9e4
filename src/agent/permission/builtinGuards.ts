import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import type { BhrainToolEffect } from '../tool/defineTool.js';
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

/** .what = what a call of each effect does, as the question before it says it */
const EFFECT_WORDS: Record<BhrainToolEffect, string> = {
  read: 'only reads',
  write: 'changes files',
  exec: 'runs commands',
  network: 'reaches the network',
  delegate: 'starts a subagent',
};

/**
 * .what = allows the calls whose tool's effect is read; asks before every other call (write, exec, network, delegate,
 *         unknown), the reason saying what the call does: `write changes files`, `bash runs commands`
 */
export const promptForWrites: BhrainPermissionGuard = {
  name: 'promptForWrites',
  check: async (input, context) => {
    const { effect } = await readCallEffect(input, context);
    if (effect === 'read') return { decision: 'allow' };
    const does = effect ? EFFECT_WORDS[effect] : 'declares no effect, so it may change files or run commands';
    return { decision: 'prompt', reason: `${input.call.name} ${does}` };
  },
};

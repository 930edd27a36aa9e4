import * as z from 'zod/mini';

import { genRulesGuard, type BhrainPermissionRules } from '../../agent/permission/genRulesGuard.js';
import { RULE_KINDS } from './settingsTable.js';

/**
 * .what = the schema of inline permission rules ({ allow, prompt, deny }, each a list of rules), each rule parsed as a
 *         rules file's is, so a bad one is reported where it is given, by its kind and index
 * .why = a settings file's `permission` and an MCP client's `permission` argument take the same rules: written once
 */
export const genPermissionRulesSchema = (): z.ZodMiniType<BhrainPermissionRules> =>
  z
    .strictObject(
      Object.fromEntries(RULE_KINDS.map((kind) => [kind, z.optional(z.array(z.string()))])) as Record<
        (typeof RULE_KINDS)[number],
        z.ZodMiniOptional<z.ZodMiniArray<z.ZodMiniString>>
      >,
    )
    .check(
      z.superRefine((rules, ctx) => {
        for (const kind of RULE_KINDS)
          (rules[kind] ?? []).forEach((rule, index) => {
            try {
              genRulesGuard({ [kind]: [rule] });
            } catch (error) {
              // the message is the whole explanation: the settings file's error says it as is
              ctx.addIssue({ code: 'custom', message: (error as Error).message, params: { explained: true }, path: [kind, index] });
            }
          });
      }),
    );

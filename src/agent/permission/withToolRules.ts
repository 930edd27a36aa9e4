import type { BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import { genRulesGuard } from './genRulesGuard.js';

/**
 * .what = a guard with Claude Code's `allowedTools` / `disallowedTools` over it: a call a disallowed rule matches is
 *         refused whatever the guard says; then the guard judges; a call it would ask about runs without asking when an
 *         allowed rule matches it. A denial of the guard stays a denial
 * .why = the peers' everyday flags (`--allowed-tools`, `--disallowed-tools`) narrow or ease a guard without replacing
 *        it: `--permission promptForWrites --allowed-tools "Edit(src/**)"` asks about every write but those
 * .note = the disallowed rules are judged as a rules guard that allows the rest, so a command bhrain cannot read whole
 *         with a disallowed bash rule is asked about (headless: refused), as a rules file's deny would make it
 */
export const withToolRules = (
  guard: BhrainPermissionGuard,
  tools: { allowed: readonly string[]; disallowed: readonly string[] },
): BhrainPermissionGuard => {
  if (!tools.allowed.length && !tools.disallowed.length) return guard;
  const refuse = tools.disallowed.length ? genRulesGuard({ allow: ['*'], deny: tools.disallowed }, 'disallowedTools') : null;
  const ease = tools.allowed.length ? genRulesGuard({ allow: tools.allowed }, 'allowedTools') : null;
  return {
    name: [guard.name, ease && 'allowedTools', refuse && 'disallowedTools'].filter(Boolean).join('+'),
    allowRead: [...(guard.allowRead ?? []), ...(ease?.allowRead ?? [])],
    // what the config check reads for a rule that names nothing: every rule the user wrote, not the allow-the-rest one
    rules: [...(guard.rules ?? []), ...(refuse?.rules.filter((rule) => rule.kind === 'deny') ?? []), ...(ease?.rules ?? [])],
    check: async (input, context) => {
      const refused = refuse ? await refuse.check(input, context) : null;
      if (refused && refused.decision !== 'allow') return refused;
      const judged = await guard.check(input, context);
      if (!ease || judged.decision === 'deny') return judged;
      const eased = await ease.check(input, context);
      if (eased.decision !== 'allow') return judged;
      // an allow of the guard's own keeps its word, with the exact naming an allowed rule adds (a protected path's write)
      return judged.decision === 'allow' ? { ...judged, namedExactly: judged.namedExactly || eased.namedExactly } : eased;
    },
  };
};

import * as z from 'zod/mini';

import type { BhrainPermissionRules } from '../../agent/permission/genRulesGuard.js';
import { checkMcpServers } from '../mcp/checkMcpServers.js';
import { BHRAIN_HOOK_EVENT_NAMES } from '../../agent/hooks/BhrainHook.js';
import { checkEnvMask } from '../../sandbox/network/genMaskedCredentials.js';
import { genPermissionRulesSchema } from './genPermissionRulesSchema.js';
import {
  BUILTIN_GUARD_NAMES,
  FILE_SETTINGS,
  isHttpUrl,
  parseDurationMs,
  SETTINGS,
  SETTINGS_SUPPLIERS,
  type SettingRow,
  type SettingRule,
} from './settingsTable.js';

// loaded by readSettingsFile on the first settings file it reads: a run without one never loads zod

/** .what = a custom issue whose message is the whole explanation (the file's error says it as is) */
const explained = (message: string) => ({ code: 'custom' as const, message, params: { explained: true } });

/** .what = inline permission rules, each rule parsed as the rules file's are */
const rulesSchema = genPermissionRulesSchema();

/** .what = the issues of a failed parse, passed on to the enclosing one (its path is added by the parent) */
const passOn = (issues: readonly z.core.$ZodIssue[], value: unknown, ctx: { issues: z.core.$ZodRawIssue[] }) => {
  for (const issue of issues) ctx.issues.push({ ...issue, input: value } as z.core.$ZodRawIssue);
};

/** .what = a guard name when a string, inline rules when an object: each checked on its own, so the error fits the form given */
const permissionSchema = z.pipe(
  z.unknown(),
  z.transform((value, ctx): string | BhrainPermissionRules => {
    const parsed = (typeof value === 'string' ? z.enum(BUILTIN_GUARD_NAMES) : rulesSchema).safeParse(value);
    if (parsed.success) return parsed.data;
    passOn(parsed.error.issues, value, ctx);
    return z.NEVER;
  }),
);

/** .what = MCP servers in Claude Code's `.mcp.json` shape, each issue worded by checkMcpServers */
const mcpServersSchema = z.pipe(
  z.unknown(),
  z.transform((value, ctx) => {
    const { servers, issues } = checkMcpServers(value);
    for (const issue of issues) ctx.issues.push({ ...explained(issue.message), path: issue.path, input: value });
    return servers;
  }),
);

/** .what = hooks in Claude Code's shape: by event, groups of command hooks, each matcher a valid regex */
const hooksSchema = z.partialRecord(
  z.enum(BHRAIN_HOOK_EVENT_NAMES),
  z.array(
    z.strictObject({
      matcher: z.optional(
        z.string().check(
          z.superRefine((value, ctx) => {
            // '*' is Claude Code's "every tool", not a regex
            if (value === '*') return;
            try {
              new RegExp(value);
            } catch (error) {
              ctx.addIssue(
                explained(`the matcher is not a valid regular expression (${(error as Error).message}); e.g. "Edit|Write" or "Bash"`),
              );
            }
          }),
        ),
      ),
      hooks: z.array(
        z.strictObject({
          type: z.literal('command'),
          command: z.string().check(z.minLength(1)),
          timeout: z.optional(z.number().check(z.gt(0))),
        }),
      ),
    }),
  ),
);

/** .what = the keys an object under `hooks` may have, by its depth: events, a group's, a hook's */
export const hookKeysAt = (path: readonly PropertyKey[]): readonly string[] =>
  path.length === 1 ? BHRAIN_HOOK_EVENT_NAMES : path.length === 3 ? ['matcher', 'hooks'] : ['type', 'command', 'timeout'];

/** .what = what the value at a path under `hooks` must be, for a "bad value" message; null for the row's own */
export const hookExpectsAt = (path: readonly PropertyKey[]): string | null => {
  const last = path[path.length - 1];
  if (path.length === 2) return 'a list of groups, e.g. [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]';
  if (last === 'hooks') return 'a list of hooks, e.g. [{"type": "command", "command": "./check.sh", "timeout": 60}]';
  if (last === 'type') return '"command" (the only kind of hook bhrain runs)';
  if (last === 'command') return 'the bash command to run, a non-empty string';
  if (last === 'timeout') return 'a number of seconds above 0';
  if (last === 'matcher') return 'a regular expression over tool names, e.g. "Edit|Write"';
  if (typeof last === 'number' && path.length === 3) return 'a group: {"matcher": "...", "hooks": [...]}';
  if (typeof last === 'number') return 'a hook: {"type": "command", "command": "...", "timeout": 60}';
  return null;
};

/** .what = a whole number of at least min (and at most max) */
const wholeNumber = (rule: { min: number; max?: number }) =>
  rule.max === undefined ? z.int().check(z.minimum(rule.min)) : z.int().check(z.minimum(rule.min), z.maximum(rule.max));

/** .what = a setting's rule as the zod/mini schema of its value in a settings file */
export const schemaOfRule = (rule: SettingRule): z.ZodMiniType => {
  if (rule.kind === 'int') return wholeNumber(rule);
  if (rule.kind === 'number') return z.number().check(z.gt(rule.above));
  if (rule.kind === 'enum') return z.enum(rule.values as [string, ...string[]]);
  if (rule.kind === 'boolean') return z.boolean();
  if (rule.kind === 'string') {
    const checks = [...(rule.minLength ? [z.minLength(rule.minLength)] : []), ...(rule.pattern ? [z.regex(rule.pattern)] : [])];
    return checks.length ? z.string().check(...checks) : z.string();
  }
  if (rule.kind === 'duration')
    return z.pipe(
      z.union([wholeNumber({ min: 1 }), z.string().check(z.refine((value) => parseDurationMs(value) !== null))]),
      z.transform((value) => (typeof value === 'number' ? value : parseDurationMs(value)!)),
    );
  if (rule.kind === 'list') {
    const { each, minLength } = rule;
    const item = minLength ? z.string().check(z.minLength(minLength)) : z.string();
    return z.array(
      each
        ? item.check(
            z.superRefine((value, ctx) => {
              const wrong = each(value);
              if (wrong) ctx.addIssue(explained(wrong));
            }),
          )
        : item,
    );
  }
  if (rule.kind === 'urlsBySupplier')
    return z.strictObject(
      Object.fromEntries(SETTINGS_SUPPLIERS.map((supplier) => [supplier, z.optional(z.string().check(z.refine(isHttpUrl)))])),
    );
  if (rule.kind === 'envMask')
    return z.record(z.string(), z.array(z.string())).check(
      z.superRefine((mask, ctx) => {
        const wrong = checkEnvMask(mask);
        if (wrong) ctx.addIssue(explained(wrong));
      }),
    );
  if (rule.kind === 'permission') return permissionSchema;
  if (rule.kind === 'hooks') return hooksSchema;
  return mcpServersSchema;
};

/** .what = every row of the settings table: the run settings, then the file-only keys */
export const FILE_ROWS = [...Object.values(SETTINGS), ...Object.values(FILE_SETTINGS)] as SettingRow[];

/** .what = the object of the rows under a key, at any depth (`sandbox.env` holds `sandbox.env.pass`), each key optional, no other allowed */
const objectOfRowsUnder = (key: string): z.ZodMiniType =>
  z.strictObject(
    Object.fromEntries(
      [
        ...new Set(
          FILE_ROWS.filter((row) => row.fileKey.startsWith(`${key}.`)).map((row) => row.fileKey.slice(key.length + 1).split('.')[0]),
        ),
      ].map((part) => {
        const row = FILE_ROWS.find((each) => each.fileKey === `${key}.${part}`);
        return [part, z.optional(row ? schemaOfRule(row.value) : objectOfRowsUnder(`${key}.${part}`))];
      }),
    ),
  );

/**
 * .what = the shape of a settings file, made from the settings table: each row at its file key, every key optional, no
 *         other key allowed. A key with nested rows (sandbox, with sandbox.denyRead) takes its own value alone, or an
 *         object of `mode` (its own value) and the nested rows: each form checked on its own, so the error fits it
 * .why = a typo (`atomm`) or a bad value is an error, never silently ignored
 */
export const genSettingsFileSchema = () => {
  const shape: Record<string, z.ZodMiniType> = {};
  for (const top of [...new Set(FILE_ROWS.map((row) => row.fileKey.split('.')[0]))]) {
    const own = FILE_ROWS.find((row) => row.fileKey === top);
    const nested = FILE_ROWS.filter((row) => row.fileKey.startsWith(`${top}.`));
    if (!nested.length) {
      shape[top] = z.optional(schemaOfRule(own!.value));
      continue;
    }
    const rowsUnder = objectOfRowsUnder(top);
    const object = own ? z.extend(rowsUnder as z.ZodMiniObject, { mode: z.optional(schemaOfRule(own.value)) }) : rowsUnder;
    if (!own) {
      shape[top] = z.optional(object);
      continue;
    }
    const alone = z.pipe(
      schemaOfRule(own.value),
      z.transform((mode) => ({ mode })),
    );
    shape[top] = z.optional(
      z.pipe(
        z.unknown(),
        z.transform((value, ctx) => {
          const parsed = (!value || typeof value !== 'object' || Array.isArray(value) ? alone : object).safeParse(value);
          if (parsed.success) return parsed.data;
          passOn(parsed.error.issues, value, ctx);
          return z.NEVER;
        }),
      ),
    );
  }
  return z.strictObject(shape);
};

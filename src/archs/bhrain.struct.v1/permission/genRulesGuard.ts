import { isAbsolute, relative, resolve } from 'node:path';

import type { BrainToolCall } from '../../../contract/BrainMessage.js';
import { BadRequestError } from '../../../contract/errors.js';
import { globToRegExp } from '../tools/files/globToRegExp.js';
import type { BhrainPermissionDecision, BhrainPermissionGuard } from './BhrainPermissionGuard.js';
import { describeOpaqueCommand, splitShellCommand } from './splitShellCommand.js';

/** .what = rules in Claude Code's style: `tool` or `tool(spec)`, evaluated deny → prompt → allow */
export interface BhrainPermissionRules {
  allow?: readonly string[];
  prompt?: readonly string[];
  deny?: readonly string[];
}

interface Rule {
  text: string;
  tool: string;
  spec: string | null;
}

/** .what = a rule parsed, or a clear error naming the rule and the expected form */
const parseRule = (text: string): Rule => {
  const match = /^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$/s.exec(text);
  if (!match)
    throw new BadRequestError(
      `invalid permission rule '${text}': expected \`tool\` or \`tool(spec)\`, e.g. \`bash(npm run test:*)\`, \`write(src/**)\`, \`read\``,
    );
  return { text, tool: match[1].toLowerCase(), spec: match[2]?.trim() || null };
};

/** .what = a bash spec as a whole-command wildcard: `*` matches anything, the rest literally */
const matchesCommandSpec = (spec: string, command: string): boolean =>
  new RegExp(`^${spec.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's').test(command);

/** .what = the values of a call that rules match: each command of a bash line, the path of a file tool, or the whole input */
const subjectsOf = (call: BrainToolCall, cwd: string): string[] => {
  if (call.name === 'bash') return splitShellCommand(String(call.input.command ?? ''));
  const path = call.input.path;
  if (typeof path === 'string' || ['read', 'write', 'edit', 'glob', 'grep'].includes(call.name)) {
    const absolute = resolve(cwd, typeof path === 'string' ? path : '.');
    const inside = relative(cwd, absolute);
    return [inside.startsWith('..') || isAbsolute(inside) ? absolute : inside || '.'];
  }
  return [JSON.stringify(call.input)];
};

const matches = (rule: Rule, call: BrainToolCall, subject: string): boolean => {
  if (rule.tool !== call.name.toLowerCase()) return false;
  if (rule.spec === null || rule.spec === '*') return true;
  if (call.name === 'bash') return matchesCommandSpec(rule.spec, subject);
  return globToRegExp(rule.spec).test(subject);
};

/**
 * .what = a command as written, and with its program's directory dropped (`/bin/rm -rf x` is also `rm -rf x`)
 * .why = deny and prompt rules name programs; a path to the same program must not slip past them (allow rules stay exact)
 */
const withBareProgram = (call: BrainToolCall, subject: string): string[] => {
  if (call.name !== 'bash') return [subject];
  const [first, ...rest] = subject.split(' ');
  const bare = first.split('/').pop();
  return bare && bare !== first ? [subject, [bare, ...rest].join(' ')] : [subject];
};

/**
 * .what = a guard from allow / prompt / deny rules; a call no rule allows is prompted
 * .why = precise policy for CI and teams; a bash line is judged by every command it runs, so `;`, `&&`, `$( )`,
 *        `bash -c`, env prefixes and quoting cannot smuggle a denied command past an allowed one
 */
export const genRulesGuard = (rules: BhrainPermissionRules, name = 'rules'): BhrainPermissionGuard => {
  const deny = (rules.deny ?? []).map(parseRule);
  const prompt = (rules.prompt ?? []).map(parseRule);
  const allow = (rules.allow ?? []).map(parseRule);
  return {
    name,
    check: ({ call }, context): BhrainPermissionDecision => {
      const subjects = subjectsOf(call, context.cwd);
      if (!subjects.length) subjects.push('');
      const first = (list: Rule[]) =>
        subjects.flatMap((subject) =>
          list.filter((rule) => withBareProgram(call, subject).some((variant) => matches(rule, call, variant))).map((rule) => ({ rule, subject })),
        )[0];
      const denied = first(deny);
      if (denied) return { decision: 'deny', reason: `denied by rule \`${denied.rule.text}\` (${denied.subject})` };
      // a command whose effect cannot be read from its words could hide a denied one: it is asked about, never allowed
      const guarded = [...deny, ...prompt].filter((rule) => rule.tool === 'bash');
      const opaque = call.name === 'bash' && guarded.length ? subjects.map((subject) => ({ subject, why: describeOpaqueCommand(subject) })).find((found) => found.why) : undefined;
      if (opaque)
        return {
          decision: 'prompt',
          reason: `cannot check \`${opaque.subject}\` against ${guarded.map((rule) => `\`${rule.text}\``).join(', ')}: ${opaque.why}`,
        };
      const prompted = first(prompt);
      if (prompted) return { decision: 'prompt', reason: `rule \`${prompted.rule.text}\` asks for approval (${prompted.subject})` };
      const unallowed = subjects.find((subject) => !allow.some((rule) => matches(rule, call, subject)));
      if (unallowed === undefined) return { decision: 'allow' };
      return { decision: 'prompt', reason: `no rule allows ${call.name}${unallowed ? ` (${unallowed})` : ''}` };
    },
  };
};

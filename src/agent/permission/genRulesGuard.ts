import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';

import picomatch from 'picomatch';

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { globToRegExp } from '../toolboxes/files/globs.js';
import { analyzeShellCommand, type ShellCommand } from '../../shell-analysis/analyzeShellCommand.js';
import type { BhrainToolPath } from '../tool/defineTool.js';
import type { BhrainPermissionDecision, BhrainPermissionGuard, BhrainPermissionRule } from './BhrainPermissionGuard.js';
import { readCallEffect } from './readCallEffect.js';
import { resolveRealPath } from './resolveRealPath.js';

/** .what = rules in Claude Code's style: `tool` or `tool(spec)`, evaluated deny → prompt → allow */
export interface BhrainPermissionRules {
  allow?: readonly string[];
  prompt?: readonly string[];
  deny?: readonly string[];
}

interface Rule {
  text: string;
  /** the tool name as written (lowercased): a name, or a glob such as `mcp__github__*` */
  tool: string;
  spec: string | null;
  /** whether the rule's tool name (or glob) names a tool */
  named: (toolName: string) => boolean;
}

/** a rule's match: the rule, and what it matched, as shown in the reason */
interface Hit {
  rule: Rule;
  subject: string;
}

/** the rule names that govern every change of a file: a `write(…)` or `edit(…)` rule judges every path any tool writes (write, edit, a custom tool's), and bash's writes */
const FILE_RULE_NAMES = ['write', 'edit'] as const;

/** .what = the prefix of every MCP tool's name (`mcp__<server>__<tool>`) */
export const MCP_TOOL_PREFIX = 'mcp__';

/** .what = the MCP server a rule's tool names (`github` in `mcp__github__*` and `mcp__github`), or null for a rule of no MCP server */
export const mcpServerOfRule = (tool: string): string | null =>
  tool.startsWith(MCP_TOOL_PREFIX) ? tool.slice(MCP_TOOL_PREFIX.length).split('__')[0] || null : null;

/**
 * .what = whether a rule's tool (lower-cased) names a tool: by name, case aside; by glob (picomatch: `mcp__github__*`,
 *         `{read,grep}`, `*`); and `mcp__<server>` (no glob), as in Claude Code, names every tool of that server
 * .why = one definition of what a rule names, for the guard that judges calls and for the check that a rule names a
 *        tool of the run (checkRuleTools)
 */
export const genRuleToolMatcher = (tool: string): ((toolName: string) => boolean) => {
  if (picomatch.scan(tool).isGlob) {
    const matcher = picomatch(tool, { dot: true, nonegate: true });
    return (toolName) => matcher(toolName.toLowerCase());
  }
  const server = tool.startsWith(MCP_TOOL_PREFIX) && !tool.slice(MCP_TOOL_PREFIX.length).includes('__') ? `${tool}__` : null;
  return (toolName) => toolName.toLowerCase() === tool || (server !== null && toolName.toLowerCase().startsWith(server));
};

/**
 * .what = a rule parsed, or a clear error naming the rule and the expected form
 * .why = a tool name may be a glob (`mcp__github__*`, picomatch); an MCP tool takes no spec (bhrain cannot know what
 *        its input means), so a spec on an MCP tool's rule fails here, loud, instead of never matching
 */
const parseRule = (text: string, home: string): Rule => {
  const match = /^\s*([A-Za-z_*?[{][\w\-*?[\]{},]*)\s*(?:\((.*)\))?\s*$/s.exec(text);
  if (!match)
    throw new BadRequestError(
      `invalid permission rule '${text}': expected \`tool\` or \`tool(spec)\`, e.g. \`bash(npm run test:*)\`, \`write(src/**)\`, \`read\`, \`mcp__github__*\``,
    );
  const tool = match[1].toLowerCase();
  const written = match[2]?.trim() || null;
  // a path rule may start at the home directory: `read(~/.npmrc)`; a bash rule's spec is command text, kept as written
  const spec =
    written !== null && tool !== 'bash' && (written === '~' || written.startsWith('~/')) ? join(home, written.slice(1)) : written;
  if (tool.startsWith(MCP_TOOL_PREFIX) && spec !== null && spec !== '*')
    throw new BadRequestError(
      `invalid permission rule '${text}': MCP tools take whole-tool rules only (their input has no path or command to match); write \`${match[1]}\``,
    );
  return { text, tool, spec, named: genRuleToolMatcher(tool) };
};

const isUnrestricted = (rule: Rule): boolean => rule.spec === null || rule.spec === '*';

/**
 * .what = a bash spec as a whole-command wildcard: `*` matches anything, the rest literally; a spec ending in `:*` also
 *         matches, as Claude Code reads it, the words before it alone or followed by more (`npm test:*` matches
 *         `npm test` and `npm test --watch`, and `npm test:unit` as a wildcard)
 */
const matchesCommand = (rule: Rule, command: string): boolean =>
  isUnrestricted(rule) ||
  (rule.spec!.endsWith(':*') && (command === rule.spec!.slice(0, -2) || command.startsWith(`${rule.spec!.slice(0, -2)} `))) ||
  new RegExp(
    `^${rule
      .spec!.split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  ).test(command);

const matchesPath = (rule: Rule, path: string): boolean => isUnrestricted(rule) || globToRegExp(rule.spec!).test(path);

/** .what = a path relative to a directory when inside it, else absolute */
const shownFrom = (base: string, absolute: string): string => {
  const inside = relative(base, absolute);
  return inside === '..' || inside.startsWith('../') || isAbsolute(inside) ? absolute : inside || '.';
};

/**
 * .what = the places a file change lands: the path as given and its real path (symlinks resolved, dangling ones too),
 *         each relative to the working directory when inside it
 * .why = `write(.env)` must also catch `envlink` (a symlink to .env) and `sub/../.env`
 */
const placesOf = (path: string, cwd: string): string[] => {
  const absolute = resolve(cwd, path);
  const real = shownFrom(resolveRealPath(resolve(cwd)), resolveRealPath(absolute));
  return [...new Set([shownFrom(resolve(cwd), absolute), real])];
};

/**
 * .what = where a file bash writes lands, or why that cannot be known: `/proc/self/cwd` is the shell's directory, other
 *         /proc paths depend on the process, and a hard link has other names no path rule can see
 */
const placeBashWrite = (path: string, cwd: string): { places: string[]; why?: string } => {
  const named = path.replace(/^\/proc\/(self|thread-self)\/cwd(?=\/|$)/, cwd);
  if (/^\/proc\//.test(named)) return { places: [], why: `\`${path}\` is a /proc path whose target depends on the process` };
  const places = placesOf(named, cwd);
  try {
    const stats = lstatSync(resolveRealPath(resolve(cwd, named)));
    if (stats.isFile() && stats.nlink > 1)
      return { places, why: `\`${path}\` has ${stats.nlink} hard links, and the rules cannot see its other names` };
  } catch {
    // not there yet: the write creates it, under the name checked
  }
  return { places };
};

const commandText = (command: ShellCommand): string => command.words.join(' ');

/**
 * .what = a command as written, and with its program's directory dropped (`/bin/rm -rf x` is also `rm -rf x`)
 * .why = deny and prompt rules name programs; a path to the same program must not slip past them (allow rules stay exact)
 */
const deniableTexts = (command: ShellCommand): string[] => {
  const [first = '', ...rest] = command.words;
  const bare = first.split('/').pop();
  return bare && bare !== first ? [commandText(command), [bare, ...rest].join(' ')] : [commandText(command)];
};

const listed = (rules: Rule[]): string => rules.map((rule) => `\`${rule.text}\``).join(', ');

/** .what = whether a rule governs file changes: it names write or edit (a glob such as `*` names both) */
const changesFiles = (rule: Rule): boolean => FILE_RULE_NAMES.some((tool) => rule.named(tool));

/** .what = the judgement of a tool judged whole (an MCP tool): by the rules that name it and have no spec */
const judgeWholeTool = (rules: { deny: Rule[]; prompt: Rule[]; allow: Rule[] }, toolName: string): BhrainPermissionDecision => {
  const first = (list: Rule[]) => list.find((rule) => isUnrestricted(rule) && rule.named(toolName));
  const denied = first(rules.deny);
  if (denied) return { decision: 'deny', reason: `denied by rule \`${denied.text}\` (${toolName})` };
  const prompted = first(rules.prompt);
  if (prompted) return { decision: 'prompt', reason: `rule \`${prompted.text}\` asks for approval (${toolName})`, pattern: prompted.text };
  if (first(rules.allow)) return { decision: 'allow' };
  return {
    decision: 'prompt',
    reason: `no rule allows ${toolName} (MCP tools run outside the sandbox: allow them with a rule such as \`${toolName}\` or \`${toolName.split('__').slice(0, 2).join('__')}__*\`)`,
  };
};

/** .what = a place a call touches, as the rules see it, and whether the call changes it */
interface Subject {
  place: string;
  writes: boolean;
}

/**
 * .what = the judgement of one call that is not bash: each place it touches (its tool's paths) against the rules that
 *         judge it, or, for a tool with no paths, its input against its tool's rules
 * .why = a path a tool writes is judged like write's, whichever tool writes it: by `write(…)` and `edit(…)` rules and the
 *        tool's own, at the path as given and at its real path; a path it reads, by the tool's own rules
 */
const judgeToolCall = (
  rules: { deny: Rule[]; prompt: Rule[]; allow: Rule[] },
  call: BrainToolCall,
  paths: readonly BhrainToolPath[],
  cwd: string,
): BhrainPermissionDecision => {
  const tool = call.name.toLowerCase();
  // an MCP tool is judged whole: only rules without a spec name it
  if (tool.startsWith(MCP_TOOL_PREFIX)) return judgeWholeTool(rules, call.name);
  const subjects: Subject[] = paths.length
    ? paths.flatMap(({ path, access }): Subject[] =>
        access === 'write'
          ? placesOf(path, cwd).map((place) => ({ place, writes: true }))
          : [{ place: shownFrom(resolve(cwd), resolve(cwd, path)), writes: false }],
      )
    : [{ place: JSON.stringify(call.input), writes: false }];
  const applies = (rule: Rule, subject: Subject) => rule.named(tool) || (subject.writes && changesFiles(rule));
  const first = (list: Rule[]): Hit | undefined =>
    subjects.flatMap((subject) =>
      list.filter((rule) => applies(rule, subject) && matchesPath(rule, subject.place)).map((rule) => ({ rule, subject: subject.place })),
    )[0];
  const denied = first(rules.deny);
  if (denied) return { decision: 'deny', reason: `denied by rule \`${denied.rule.text}\` (${denied.subject})` };
  const prompted = first(rules.prompt);
  if (prompted)
    return {
      decision: 'prompt',
      reason: `rule \`${prompted.rule.text}\` asks for approval (${prompted.subject})`,
      pattern: prompted.rule.text,
    };
  const unallowed = subjects.find((subject) => !rules.allow.some((rule) => applies(rule, subject) && matchesPath(rule, subject.place)));
  if (unallowed !== undefined) return { decision: 'prompt', reason: `no rule allows ${call.name} (${unallowed.place})` };
  const namesExactly = (rule: Rule, subject: Subject) =>
    rule.spec !== null && !picomatch.scan(rule.spec).isGlob && shownFrom(resolve(cwd), resolve(cwd, rule.spec)) === subject.place;
  const written = subjects.filter((subject) => subject.writes);
  const namedExactly =
    written.length > 0 && written.every((subject) => rules.allow.some((rule) => applies(rule, subject) && namesExactly(rule, subject)));
  return namedExactly ? { decision: 'allow', namedExactly } : { decision: 'allow' };
};

/**
 * .what = the judgement of a bash line, read from a real parse: each command it runs against `bash(…)` rules, each file
 *         it writes (redirect, tee) against `write(…)` / `edit(…)` rules, and what it does that cannot be understood
 */
const judgeBashCall = async (
  rules: { deny: Rule[]; prompt: Rule[]; allow: Rule[] },
  line: string,
  cwd: string,
): Promise<BhrainPermissionDecision> => {
  const analysis = await analyzeShellCommand({ command: line });
  const commands = analysis.commands.length || analysis.writes.length ? analysis.commands : [{ words: [], env: [], transparent: false }];
  const placed = analysis.writes.map((write) => (write.path === null ? { places: [], why: write.why } : placeBashWrite(write.path, cwd)));
  const writes = placed.filter((write) => write.places.length);
  const unknownWrites = placed.flatMap((write) => (write.why ? [write.why] : []));
  const ofBash = (list: Rule[]) => list.filter((rule) => rule.named('bash'));
  const ofFiles = (list: Rule[]) => list.filter(changesFiles);
  const first = (list: Rule[]): Hit | undefined =>
    [
      ...commands.flatMap((command) =>
        ofBash(list)
          .filter((rule) => deniableTexts(command).some((text) => matchesCommand(rule, text)))
          .map((rule) => ({ rule, subject: commandText(command) })),
      ),
      ...writes.flatMap((write) =>
        ofFiles(list)
          .filter((rule) => write.places.some((place) => matchesPath(rule, place)))
          .map((rule) => ({ rule, subject: `writes ${write.places.join(', really ')}` })),
      ),
    ][0];
  const denied = first(rules.deny);
  if (denied) return { decision: 'deny', reason: `denied by rule \`${denied.rule.text}\` (${denied.subject})` };
  // what the analysis cannot read could hide a denied command or write, and must never be matched by an allow rule
  const unrestricted = ofBash(rules.allow).some(isUnrestricted);
  const guarded = [...ofBash(rules.deny), ...ofBash(rules.prompt), ...ofFiles(rules.deny), ...ofFiles(rules.prompt)];
  if (analysis.unreadable.length && (guarded.length || !unrestricted))
    return {
      decision: 'prompt',
      reason: `cannot check this command against ${guarded.length ? listed(guarded) : 'the allow rules'}: ${analysis.unreadable.slice(0, 3).join('; ')}`,
    };
  const fileGuarded = [...ofFiles(rules.deny), ...ofFiles(rules.prompt)];
  if (unknownWrites.length && (fileGuarded.length || !unrestricted))
    return {
      decision: 'prompt',
      reason: `cannot check where this command writes against ${fileGuarded.length ? listed(fileGuarded) : 'the allow rules'}: ${unknownWrites.slice(0, 3).join('; ')}`,
    };
  const prompted = first(rules.prompt);
  if (prompted)
    return {
      decision: 'prompt',
      reason: `rule \`${prompted.rule.text}\` asks for approval (${prompted.subject})`,
      pattern: prompted.rule.text,
    };
  if (unrestricted) return { decision: 'allow' };
  const unallowed = commands.find(
    (command) =>
      !command.transparent && !ofBash(rules.allow).some((rule) => matchesCommand(rule, [...command.env, ...command.words].join(' '))),
  );
  if (unallowed) {
    const text = [...unallowed.env, ...unallowed.words].join(' ');
    return { decision: 'prompt', reason: `no rule allows bash${text ? ` (${text})` : ''}` };
  }
  const unallowedWrite = writes.find(
    (write) => !write.places.every((place) => ofFiles(rules.allow).some((rule) => matchesPath(rule, place))),
  );
  if (unallowedWrite)
    return {
      decision: 'prompt',
      reason: `no rule allows bash to write ${unallowedWrite.places.join(', really ')} (a redirect or tee is a write: add a \`write(…)\` rule)`,
    };
  return { decision: 'allow' };
};

/**
 * .what = the paths `read(<path>)` allow rules hand back from those hidden from the model: an absolute path or one from
 *         `~/`, with no glob character but a trailing `/**` (which hands back the same directory)
 * .why = a user who allows reading a hidden path by name means the model to read it, with read, grep, glob and bash;
 *        a glob (`read(~/.ssh/*.pub)`) or a plain `read` names no path, and hands nothing back
 */
const findReadHandbacks = (allow: readonly Rule[]): string[] =>
  allow.flatMap((rule) => {
    if (rule.tool !== 'read' || rule.spec === null) return [];
    const path = rule.spec.replace(/\/\*\*$/, '') || '/';
    return isAbsolute(path) && !picomatch.scan(path).isGlob ? [resolve(path)] : [];
  });

/**
 * .what = a guard from allow / prompt / deny rules; a call no rule allows is prompted
 * .why = precise policy for CI and teams. How rules are judged:
 *        - a bash line is parsed (tree-sitter-bash) and every simple command it would run is judged: after ; && || | &
 *          and newlines, in $( ), backticks, <( ), here-doc expansions, case items, functions, conditions, `bash -c '…'`
 *          and literal `eval`/`trap` strings, and through wrappers (env, sudo, timeout, nice, xargs, find -exec, …).
 *          A deny or prompt rule also matches the program without its directory (`/bin/rm` is `rm`).
 *        - writes are judged by file rules: `write(spec)` and `edit(spec)` rules both apply to every path a tool declares
 *          it writes (write, edit, a custom tool's paths() with access write) and to bash's redirect and tee targets,
 *          matched against the path as given and its real path (symlinks resolved); a tool's own rules judge it too.
 *          A path a tool reads is judged by that tool's rules (`read(src/**)`, `grep(docs/**)`). With an allow-list (no plain `bash` allowed) a redirect to a file needs a
 *          `write(…)` or `edit(…)` allow rule; /dev/null, /dev/stdout, /dev/stderr and /dev/fd/N are not files.
 *        - what the analysis cannot fully understand (a parse error, a program only known at run time, eval-like
 *          builtins, subscripts and arithmetic that can run code, wrappers it does not unwrap) is prompted, never
 *          allowed, whenever a bash or file deny/prompt rule exists or bash is not allowed outright.
 *        - on an allow-list, transparent wrappers (time, nice, timeout, `bash -c`) are skipped and what they run is
 *          matched; sudo, xargs and find must be allowed themselves too; `VAR=x` prefixes other than locale and log
 *          settings stay part of the command the allow rule must match.
 *        - a rule's tool name may be a glob (`mcp__github__*`, `mcp__*`), and `mcp__<server>` names every tool of that
 *          server; an MCP tool (`mcp__<server>__<tool>`) is judged whole, by the rules without a spec that name it, since
 *          bhrain cannot know what its input means.
 *        - a rule that names no tool is not judged here: the session's config check (checkRuleTools) refuses it once
 *          the run's tools are known.
 *        - a path rule's spec may start with `~/`, the home directory (options.home, else the user's); a
 *          `read(<path>)` allow rule also hands that path back from those hidden from the model (allowRead)
 *        Rules cannot promise more than this: deny rules name programs, so an interpreter given inline code
 *        (`python -c`, `node -e`, `awk 'BEGIN{system(…)}'`) or a program that deletes by itself (`find -delete`) is
 *        not unwrapped; an allow-list still only allows them when a rule names them. The sandbox bounds their effect.
 */
export const genRulesGuard = (
  rules: BhrainPermissionRules,
  name = 'rules',
  options: { home?: string } = {},
): BhrainPermissionGuard & { rules: readonly BhrainPermissionRule[] } => {
  const home = options.home ?? homedir();
  const parse = (text: string) => parseRule(text, home);
  const parsed = { deny: (rules.deny ?? []).map(parse), prompt: (rules.prompt ?? []).map(parse), allow: (rules.allow ?? []).map(parse) };
  return {
    name,
    allowRead: findReadHandbacks(parsed.allow),
    rules: (['deny', 'prompt', 'allow'] as const).flatMap((kind) => parsed[kind].map(({ text, tool }) => ({ kind, text, tool }))),
    check: async (input, context) =>
      input.call.name.toLowerCase() === 'bash'
        ? judgeBashCall(parsed, String(input.call.input.command ?? ''), context.cwd)
        : judgeToolCall(parsed, input.call, (await readCallEffect(input, context)).paths, context.cwd),
  };
};

// the server behind `bhrain mcp serve`, loaded only by that command: bhrain's skills as MCP tools over stdio, each call
// run by runSkillHosted, the path `bhrain ask|act` runs by (settings, sandbox, budgets, records, refs)
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import * as z from 'zod';

import type { BhrainEvent } from '../../../agent/events.js';
import { BHRAIN_CONFIG_BOUNDS } from '../../../agent/constants.js';
import type { BhrainPermissionGuard } from '../../../agent/permission/BhrainPermissionGuard.js';
import { allowAll, promptForWrites, readOnly } from '../../../agent/permission/builtinGuards.js';
import { genRulesGuard } from '../../../agent/permission/genRulesGuard.js';
import { BadRequestError, BhrainError } from '../../../core/contract/errors.js';
import { exitCodeOfError } from '../../exitCodes.js';
import type { SkillName, SkillOptions } from '../../genSkillCommand.js';
import { resolvePermission } from '../../resolvePermission.js';
import { runSkillHosted, type SkillHost } from '../../runSkill.js';
import { resolveSkillSettings } from '../../settings/resolveSkillSettings.js';
import { genPermissionRulesSchema } from '../../settings/genPermissionRulesSchema.js';
import { BUILTIN_GUARD_NAMES, parseDurationMs, type SkillSettingsFlags } from '../../settings/settingsTable.js';
import type { SkillOutputJson } from '../../skillOutputJson.js';
import type { RunEventOrigin, RunSink } from '../../run/RunSink.js';
import type { McpServeOptions } from './McpServeOptions.js';
import { narrowGuard } from './narrowGuard.js';
import { onStopSignals } from '../../onStopSignals.js';

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const BUILTIN_GUARDS: Record<(typeof BUILTIN_GUARD_NAMES)[number], BhrainPermissionGuard> = { allowAll, readOnly, promptForWrites };

/** .what = the budget arguments every tool takes: each one only lowers the server's own cap */
const BUDGET_INPUT = {
  maxIterations: z
    .number()
    .int()
    .min(BHRAIN_CONFIG_BOUNDS.maxIterations.min)
    .max(BHRAIN_CONFIG_BOUNDS.maxIterations.max)
    .optional()
    .describe("the most loop iterations (never more than the server's own cap)"),
  maxBudgetUsd: z
    .number()
    .positive()
    .optional()
    .describe("stop when the run's cost reaches this many USD (never more than the server's cap)"),
  maxTokens: z.number().int().min(1).optional().describe('stop when the run has used this many tokens (input + output)'),
  maxWallTime: z.string().optional().describe('stop after this long: 90s, 10m, 1h, 1500ms'),
};

/** .what = where a run works and on which model: every tool takes them */
const WHERE_INPUT = {
  atom: z.string().optional().describe("the model: claude, claude/haiku, qwen, openai/gpt-5, ... (default: the server's settings)"),
  cwd: z.string().optional().describe("the directory the run works in, within the server's root (relative to the root; default: the root)"),
};

/** .what = the permission a client may ask act for: a builtin guard or inline rules, narrowing the server's */
const PERMISSION_INPUT = z
  .union([z.enum(BUILTIN_GUARD_NAMES), genPermissionRulesSchema()])
  .optional()
  .describe(
    'narrow the permission: readOnly, promptForWrites (no one can answer a prompt here: it denies), or rules {"allow": [...], "deny": [...]}; never looser than the server\'s',
  );

/** .what = what every tool returns as structured content: the run's answer, why it ended, its refs and what it cost */
const RESULT_OUTPUT = {
  skill: z.enum(['ask', 'act']).nullable(),
  atom: z.string().nullable(),
  /** the answer; null when the run never started */
  answer: z.string().nullable(),
  termination: z.string(),
  exitCode: z.number().int(),
  refs: z.object({ series: z.string().nullable(), episode: z.string().nullable() }),
  record: z.string().nullable(),
  cost: z.object({ usd: z.number().nullable() }),
  tokens: z.object({ input: z.number(), output: z.number(), cache: z.object({ get: z.number(), set: z.number() }) }).nullable(),
  iterations: z.number().nullable(),
  elapsedMs: z.number().nullable(),
  toolCalls: z.object({ made: z.number(), failed: z.number(), denied: z.number() }),
  warnings: z.array(z.string()),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
};
type ToolResultContent = z.infer<z.ZodObject<typeof RESULT_OUTPUT>>;

/** .what = the arguments of a call, as the tools' input schemas give them */
interface CallArgs {
  prompt: string;
  atom?: string;
  cwd?: string;
  maxIterations?: number;
  maxBudgetUsd?: number;
  maxTokens?: number;
  maxWallTime?: string;
  permission?: z.infer<typeof PERMISSION_INPUT>;
  ref?: string;
  skill?: SkillName;
}

/** .what = the server's root: a directory that exists, as its real path */
const resolveRoot = async (root: string | undefined, cwd: string): Promise<string> => {
  const path = resolve(cwd, root ?? '.');
  const real = await realpath(path).catch(() => null);
  if (!real || !(await stat(real)).isDirectory()) throw new BadRequestError(`--root ${root}: not a directory`);
  return real;
};

/** .what = whether a real path is the root or lies within it */
const isWithinRoot = (root: string, real: string): boolean => {
  const inside = relative(root, real);
  return inside === '' || (!isAbsolute(inside) && inside !== '..' && !inside.startsWith(`..${sep}`));
};

/**
 * .what = the directory a call runs in: the root, or the call's cwd (relative to the root) when it lies within the root
 * .why = the root bounds every run: a cwd outside it, or a symlink inside it that leads out, is refused naming the root
 */
export const resolveCallCwd = async (root: string, cwd: string | undefined): Promise<string> => {
  if (cwd === undefined) return root;
  const path = resolve(root, cwd);
  const outside = () =>
    new BadRequestError(`cwd ${cwd} is outside the server's root ${root}: give a directory within it (or start the server with --root)`);
  // refused before anything is looked at: whether a path outside the root exists is not the client's to learn
  if (!isWithinRoot(root, path)) throw outside();
  const real = await realpath(path).catch(() => null);
  if (!real || !(await stat(real)).isDirectory()) throw new BadRequestError(`cwd ${cwd}: not a directory within the server's root ${root}`);
  if (!isWithinRoot(root, real)) throw outside();
  return real;
};

/**
 * .what = the ref a continue call names: a hash or prefix as given; `@file` (a file `bhrain export` wrote) resolved from
 *         the call's cwd, and only within the root
 * .why = a client must not make the server read a file outside the root (whose first bytes a parse error would echo)
 */
const resolveCallRef = async (root: string, cwd: string, ref: string | undefined): Promise<string | undefined> => {
  if (ref === undefined || !ref.startsWith('@')) return ref;
  const path = resolve(cwd, ref.slice(1));
  const outside = () =>
    new BadRequestError(`ref ${ref} is outside the server's root ${root}: give a series hash, or a file within the root`);
  if (!isWithinRoot(root, path)) throw outside();
  const real = await realpath(path).catch(() => null);
  if (!real) throw new BadRequestError(`ref ${ref}: there is no file ${path}; give a file written by \`bhrain export <ref> > file.json\``);
  if (!isWithinRoot(root, real)) throw outside();
  return `@${real}`;
};

/**
 * .what = the server's settings flags, checked now as a run would check them (exit 2 before serving); a rules file given
 *         to --permission named by its absolute path, since each run resolves it from its own cwd
 */
const checkServerFlags = async (flags: SkillSettingsFlags, root: string, options: McpServeOptions, cwd: string) => {
  const permission = flags.permission;
  const checked = { ...flags };
  if (typeof permission === 'string' && !(BUILTIN_GUARD_NAMES as readonly string[]).includes(permission)) {
    checked.permission = resolve(cwd, permission);
    await resolvePermission(checked.permission, cwd);
  }
  await resolveSkillSettings({ skill: 'act', flags: checked, cwd: root, trustProject: !!options.trustProject }, { env: process.env });
  return checked;
};

/** .what = the client's permission as a guard that narrows the settings', or undefined when it narrows nothing */
const readClientPermission = (permission: CallArgs['permission']): SkillHost['narrowGuard'] => {
  if (permission === undefined || permission === 'allowAll') return undefined;
  const client = typeof permission === 'string' ? BUILTIN_GUARDS[permission] : genRulesGuard(permission, 'rules(client)');
  return (settings) => narrowGuard(settings, client);
};

/** .what = the client's budgets as the host's caps; a wall time that is not a duration is a bad request */
const readClientLimits = (args: CallArgs): SkillHost['limits'] => {
  const maxWallTime = args.maxWallTime === undefined ? undefined : parseDurationMs(args.maxWallTime);
  if (maxWallTime === null) throw new BadRequestError(`maxWallTime '${args.maxWallTime}' is not a duration: give 90s, 10m, 1h or 1500ms`);
  return { maxIterations: args.maxIterations, maxBudgetUsd: args.maxBudgetUsd, maxTokens: args.maxTokens, maxWallTime };
};

/** .what = one line of progress for an event, or null for the events a client need not hear of */
const describeEvent = (event: BhrainEvent): string | null => {
  if (event.type === 'SessionStarted') return `started on ${event.atom}`;
  if (event.type === 'ToolCallStarted') return `tool call: ${event.toolName}`;
  if (event.type === 'IterationCompleted')
    return `iteration ${event.iterationNumber} done${event.hadToolCalls ? ` (${event.toolCallCount} tool call(s))` : ''}`;
  if (event.type === 'RequestRetried') return `retrying the model request (attempt ${event.attempt})`;
  if (event.type === 'Compacted') return 'context compacted';
  // the type only: the description is the model's text, which a client need not see
  if (event.type === 'SubagentStarted') return `subagent ${event.subagentType} started`;
  return null;
};

/**
 * .what = the client's progress notifications of one call, as a sink of its run: a line for each event of the run's
 *         session a client need hear of (describeEvent), when the call asked for progress (a progressToken)
 * .why = sent() is awaited before the result: a client drops progress that comes after it
 */
const genProgressNotificationSink = (extra: ToolExtra): { sink: RunSink; sent: () => Promise<void> } => {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  // the notifications still on their way
  let notified: Promise<void> = Promise.resolve();
  const onEvent = (event: BhrainEvent, origin: RunEventOrigin) => {
    const message = origin === 'session' ? describeEvent(event) : null;
    if (progressToken === undefined || message === null) return;
    progress += 1;
    const sent = extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
      .catch((error: Error) => void process.stderr.write(`bhrain mcp serve: a progress notification failed: ${error.message}\n`));
    notified = notified.then(() => sent);
  };
  return { sink: { name: 'progress notifications', onEvent }, sent: () => notified };
};

/** .what = the result object of a run as the tool's structured content */
const toStructured = (result: SkillOutputJson): ToolResultContent => ({
  skill: result.skill,
  atom: result.atom,
  answer: result.output === null ? null : typeof result.output === 'string' ? result.output : JSON.stringify(result.output),
  termination: result.termination,
  exitCode: result.exitCode,
  refs: { series: result.series?.hash ?? null, episode: result.episode?.hash ?? null },
  record: result.record,
  cost: { usd: result.metrics?.cost.usd ?? null },
  tokens: result.metrics?.tokens ?? null,
  iterations: result.metrics?.iterations ?? null,
  elapsedMs: result.metrics?.elapsedMs ?? null,
  toolCalls: { made: result.toolCalls.made, failed: result.toolCalls.failed, denied: result.toolCalls.denied },
  warnings: result.warnings,
  error: result.error,
});

/**
 * .what = a run's result as a tool result: the answer as text, the structured content (and its JSON as text, for clients
 *         that read only text); a run that did not complete (exit code not 0) is isError, its text saying why
 */
const toToolResult = (result: SkillOutputJson): CallToolResult => {
  const structured = toStructured(result);
  const failed = result.exitCode !== 0;
  const why = `bhrain ${result.skill ?? 'run'} ended: ${result.termination} (exit ${result.exitCode})${result.error ? `: ${result.error.message}` : ''}`;
  const text = failed ? [why, structured.answer].filter(Boolean).join('\n\n') : (structured.answer ?? '');
  return {
    content: [
      { type: 'text', text },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
    isError: failed,
  };
};

/** .what = a tool error: a call refused before any run (a cwd outside the root, a bad argument) */
const toolError = (error: unknown, debug: boolean): CallToolResult => {
  const known = error instanceof BhrainError;
  const message = known ? error.message : `unexpected failure: ${(error as Error)?.message ?? error}`;
  if (!known && debug) process.stderr.write(`bhrain mcp serve: ${String((error as Error)?.stack)}\n`);
  return { content: [{ type: 'text', text: message }], isError: true };
};

/** .what = the server's state: its root, its flags, and the runs in flight (each stopped when the server closes) */
interface ServeScope {
  root: string;
  flags: SkillSettingsFlags;
  options: McpServeOptions;
  runs: Set<{ stop: AbortController; done: Promise<unknown> }>;
}

/**
 * .what = one tool call: its cwd checked within the root, then one hosted run, with progress sent while it works and the
 *         client's cancel stopping it
 */
const runCall = async (scope: ServeScope, skill: SkillName, args: CallArgs, extra: ToolExtra): Promise<CallToolResult> => {
  const { options } = scope;
  try {
    const cwd = await resolveCallCwd(scope.root, args.cwd);
    const ref = await resolveCallRef(scope.root, cwd, args.ref);
    const stop = new AbortController();
    if (extra.signal.aborted) stop.abort();
    else extra.signal.addEventListener('abort', () => stop.abort(), { once: true });
    const progress = genProgressNotificationSink(extra);
    const runOptions: SkillOptions = {
      arch: 'bhrain.struct.v1',
      output: 'json',
      record: options.record !== false,
      quiet: true,
      debug: options.debug,
      trustProject: options.trustProject,
      subagents: options.subagents,
      onSeries: ref,
    };
    const flags = { ...scope.flags, ...(args.atom !== undefined ? { atom: args.atom } : {}) };
    const host: SkillHost = {
      cwd,
      prompt: args.prompt,
      signal: stop.signal,
      sink: progress.sink,
      limits: readClientLimits(args),
      narrowGuard: readClientPermission(args.permission),
    };
    const done = runSkillHosted(skill, runOptions, flags, host);
    const run = { stop, done };
    scope.runs.add(run);
    try {
      const result = await done;
      await progress.sent();
      return toToolResult(result);
    } finally {
      scope.runs.delete(run);
    }
  } catch (error) {
    return toolError(error, !!options.debug);
  }
};

/** .what = the three tools, registered with honest annotations and the same structured result */
const registerTools = (server: McpServer, scope: ServeScope): void => {
  const prompt = z.string().min(1).describe('the task or question');
  server.registerTool(
    'ask',
    {
      title: 'Ask bhrain (read-only)',
      description:
        "Ask bhrain's agent a question about the code: it reads, globs, greps and searches the web, and changes nothing. Returns the answer, why the run ended, its refs (series, to continue) and its cost.",
      inputSchema: { prompt, ...WHERE_INPUT, ...BUDGET_INPUT },
      outputSchema: RESULT_OUTPUT,
      annotations: { title: 'Ask bhrain (read-only)', readOnlyHint: true, openWorldHint: true },
    },
    (args, extra) => runCall(scope, 'ask', args, extra),
  );
  server.registerTool(
    'act',
    {
      title: 'Let bhrain act',
      description:
        "Give bhrain's agent a task: it reads, writes and edits files and runs bash (sandboxed) in cwd, within the server's settings. Returns the answer, why the run ended, its refs (series, to continue) and its cost.",
      inputSchema: { prompt, ...WHERE_INPUT, permission: PERMISSION_INPUT, ...BUDGET_INPUT },
      outputSchema: RESULT_OUTPUT,
      annotations: { title: 'Let bhrain act', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    (args, extra) => runCall(scope, 'act', args, extra),
  );
  server.registerTool(
    'continue',
    {
      title: 'Continue a bhrain run',
      description:
        'Continue a saved bhrain conversation: give the series ref an earlier call returned (refs.series, or a prefix of it) and the next prompt; skill ask (read-only, the default) or act.',
      inputSchema: {
        ref: z.string().min(1).describe('the series to continue: refs.series of an earlier result, a prefix of it, or @file'),
        prompt,
        skill: z.enum(['ask', 'act']).default('ask').describe('ask (read-only) or act'),
        ...WHERE_INPUT,
        permission: PERMISSION_INPUT,
        ...BUDGET_INPUT,
      },
      outputSchema: RESULT_OUTPUT,
      annotations: {
        title: 'Continue a bhrain run',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    (args, extra) => runCall(scope, args.skill, args, extra),
  );
};

/** .what = resolves when the server should stop: its client closed stdin, or a SIGINT or SIGTERM came */
const untilClosed = (): Promise<string> =>
  new Promise((done) => {
    process.stdin.once('end', () => done('the client closed stdin'));
    process.stdin.once('close', () => done('the client closed stdin'));
    onStopSignals(done);
  });

/**
 * .what = `bhrain mcp serve`: checks its flags and root (exit 2 before serving), serves the tools over stdio until the
 *         client goes, then stops every run in flight (their refs saved) and exits 0
 * .why = stdout is the MCP channel: nothing else is ever written there (runs are hosted: their progress and notices go
 *        to stderr, their results to the client)
 */
export const serveMcp = async (
  options: McpServeOptions,
  flags: SkillSettingsFlags,
  /** the package's version is given, not imported: the module that reads it is the CLI's start, a chunk of its own if shared */
  context: { cwd: string; version: string },
): Promise<number> => {
  let scope: ServeScope;
  try {
    const root = await resolveRoot(options.root, context.cwd);
    scope = { root, flags: await checkServerFlags(flags, root, options, context.cwd), options, runs: new Set() };
  } catch (error) {
    const message = error instanceof BhrainError ? error.message : `unexpected failure: ${(error as Error)?.message ?? error}`;
    process.stderr.write(`bhrain mcp serve: ${message}\n`);
    return exitCodeOfError(error);
  }
  const server = new McpServer(
    { name: 'bhrain', version: context.version },
    {
      capabilities: { tools: {} },
      instructions: `bhrain runs an agent on a task: ask reads only, act may change files in its cwd (within ${scope.root}), continue resumes a series ref.`,
    },
  );
  registerTools(server, scope);
  const closed = untilClosed();
  await server.connect(new StdioServerTransport());
  process.stderr.write(`bhrain mcp serve: serving ask, act and continue over stdio (root ${scope.root})\n`);
  const why = await closed;
  process.stderr.write(`bhrain mcp serve: stopping (${why}); ${scope.runs.size} run(s) in flight are stopped, their refs saved\n`);
  const runs = [...scope.runs];
  for (const run of runs) run.stop.abort();
  await Promise.allSettled(runs.map((run) => run.done));
  await server.close();
  return 0;
};

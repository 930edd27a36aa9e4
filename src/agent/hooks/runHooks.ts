import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { BrainMessage } from '../../core/contract/BrainMessage.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import type { BhrainEvent, BhrainHookDecision } from '../events.js';
import type { BhrainHook, BhrainHookEventName, BhrainHookInput, BhrainHookOutput, BhrainHooks } from './BhrainHook.js';

// loaded by the session only when the config has hooks: a run without any never loads this module

/** .what = a hook's timeout when it names none (Claude Code's) */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;

/** .what = Claude Code's tool names by bhrain's, so a matcher or a script written for Claude Code works unchanged */
export const CLAUDE_CODE_TOOL_NAMES: Readonly<Record<string, string>> = {
  bash: 'Bash',
  edit: 'Edit',
  write: 'Write',
  read: 'Read',
  glob: 'Glob',
  grep: 'Grep',
  websearch: 'WebSearch',
  task: 'Task',
};

/** .what = the events whose matcher picks by a field of the input, as in Claude Code: the tool, the source, the trigger */
const MATCHED_ON: Partial<Record<BhrainHookEventName, 'tool_name' | 'source' | 'trigger'>> = {
  PreToolUse: 'tool_name',
  PostToolUse: 'tool_name',
  SessionStart: 'source',
  PreCompact: 'trigger',
};

/** .what = the events whose hooks inform only: a block there is a warning */
const INFORM_ONLY: ReadonlySet<BhrainHookEventName> = new Set(['SessionStart', 'PreCompact', 'SessionEnd']);

/** .what = what a session gives its hooks: the hooks, where it is, how it reports, and its transcript to write out */
export interface HookRunContext {
  hooks: BhrainHooks;
  sessionUuid: string;
  cwd: string;
  transcriptPath: string;
  messages: () => readonly BrainMessage[];
  emit: (event: BhrainEvent) => void;
  log: BrainLog;
  redact: SecretRedactor;
  /** the session's stop (an abort, the wall-time deadline): it stops the hooks under way too */
  signal?: AbortSignal;
}

/**
 * .what = what the hooks of one event decided together
 * .note = blocked: a hook blocked (exit 2, decision block, permissionDecision deny) or, for PreToolUse, failed; its
 *         reasons. stop: a hook said continue: false (its stopReason)
 */
export interface HookVerdict {
  ran: number;
  blocked: string | null;
  permission: 'allow' | 'ask' | null;
  permissionReason: string | null;
  contexts: string[];
  updatedInput: Record<string, unknown> | null;
  stop: string | null;
  /** what the user is shown: failed hooks, non-blocking errors, systemMessage */
  warnings: string[];
}

/** .what = whether a hook's matcher takes a tool: a regex matched whole, case-insensitively, on either of its names */
export const matchesTool = (matcher: string | undefined, toolName: string): boolean => {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  const names = [toolName, CLAUDE_CODE_TOOL_NAMES[toolName] ?? toolName];
  try {
    const pattern = new RegExp(`^(?:${matcher})$`, 'i');
    return names.some((name) => pattern.test(name));
  } catch {
    // not a regex: its text, as Claude Code compares a plain name
    return names.some((name) => name.toLowerCase() === matcher.toLowerCase());
  }
};

/** .what = a tool's input as a Claude Code hook reads it: file_path (absolute) beside path for the files tools */
export const hookToolInput = (toolName: string, input: unknown, cwd: string): Record<string, unknown> => {
  const fields = input && typeof input === 'object' && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : {};
  if (['read', 'write', 'edit'].includes(toolName) && typeof fields.path === 'string' && fields.file_path === undefined)
    fields.file_path = fields.path.startsWith('/') ? fields.path : `${cwd.replace(/\/$/, '')}/${fields.path}`;
  return fields;
};

/**
 * .what = an updatedInput back in bhrain's shape: for the files tools, a file_path the hook changed (or gave alone)
 *         becomes path; an unchanged one is dropped
 * .why = a Claude Code script changes file_path; a bhrain-aware one may change path and pass file_path through
 */
export const toolInputOfHook = (
  toolName: string,
  updated: Record<string, unknown>,
  given: Record<string, unknown>,
): Record<string, unknown> => {
  if (!['read', 'write', 'edit'].includes(toolName) || updated.file_path === undefined) return updated;
  const { file_path: filePath, ...rest } = updated;
  return rest.path === undefined || filePath !== given.file_path ? { ...rest, path: filePath } : rest;
};

type HookEnd = { output: BhrainHookOutput | null; failure: string | null; durationMs: number };

/** .what = runs one hook within its timeout and the session's stop: a throw, the timeout or the stop is a failure, never a hang */
const runOne = async (hook: BhrainHook, input: BhrainHookInput, session?: AbortSignal): Promise<HookEnd> => {
  const started = performance.now();
  const timeoutMs = hook.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const timeout = new Promise<HookEnd>((resolve) => {
    const fail = (failure: string) => {
      abort.abort(new Error(failure));
      resolve({ output: null, failure, durationMs: Math.round(performance.now() - started) });
    };
    timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
    onStop = () => fail('stopped: the session was stopped');
    if (session?.aborted) onStop();
    else session?.addEventListener('abort', onStop, { once: true });
  });
  const ran = (async (): Promise<HookEnd> => {
    try {
      const output = await hook.run(input, { signal: abort.signal });
      const valid = output && typeof output === 'object' ? output : null;
      return { output: valid, failure: null, durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      return { output: null, failure: (error as Error)?.message ?? String(error), durationMs: Math.round(performance.now() - started) };
    }
  })();
  try {
    return await Promise.race([ran, timeout]);
  } finally {
    clearTimeout(timer);
    if (onStop) session?.removeEventListener('abort', onStop);
  }
};

/** .what = the decision one hook's output makes, as HookCompleted names it */
const decisionOf = (output: BhrainHookOutput | null, failure: string | null): BhrainHookDecision => {
  if (failure) return 'failed';
  const permission = output?.hookSpecificOutput?.permissionDecision;
  if (permission) return permission;
  if (output?.decision === 'block') return 'block';
  if (output?.decision === 'approve') return 'allow';
  if (output?.continue === false) return 'stop';
  return null;
};

/** .what = writes the session's messages as JSONL where transcript_path says, so a hook that reads it finds them */
const writeTranscript = async (context: HookRunContext): Promise<void> => {
  await mkdir(dirname(context.transcriptPath), { recursive: true, mode: 0o700 });
  const lines = context.messages().map((message) => JSON.stringify(message));
  // whole or not at all: the hooks of calls that run at once write it at once, and a hook may be reading it
  const partial = `${context.transcriptPath}.${randomBytes(4).toString('hex')}`;
  await writeFile(partial, lines.length ? `${lines.join('\n')}\n` : '', { mode: 0o600 });
  await rename(partial, context.transcriptPath);
};

/**
 * .what = the hooks of an event that apply: for a tool event, those whose matcher takes the tool (by either name); for
 *         SessionStart and PreCompact, those whose matcher takes the source (startup, resume) or trigger (auto); for the
 *         others, all (a matcher there is ignored, as in Claude Code)
 */
export const hooksOf = (hooks: BhrainHooks, event: BhrainHookEventName, subject?: string): readonly BhrainHook[] =>
  (hooks[event] ?? []).filter((hook) => !MATCHED_ON[event] || matchesTool(hook.matcher, subject ?? ''));

/**
 * .what = runs the hooks of one event that apply, in parallel, each within its timeout, with HookStarted and HookCompleted
 *         for each, and what they decided together
 * .why = a hook that hangs, crashes or floods never holds the session: its failure is a warning, and for PreToolUse a
 *        denial (fails closed); what a hook feeds the model is redacted as a tool's output is
 */
export const runHooks = async (
  input: {
    event: BhrainHookEventName;
    fields: Omit<BhrainHookInput, 'session_id' | 'transcript_path' | 'cwd' | 'hook_event_name'>;
    callId?: string;
  },
  context: HookRunContext,
): Promise<HookVerdict> => {
  const { event } = input;
  const toolName = input.fields.tool_name;
  const ours =
    toolName === undefined ? undefined : (Object.entries(CLAUDE_CODE_TOOL_NAMES).find(([, cc]) => cc === toolName)?.[0] ?? toolName);
  const on = MATCHED_ON[event];
  const hooks = hooksOf(context.hooks, event, on === 'tool_name' ? ours : on ? input.fields[on] : undefined);
  const verdict: HookVerdict = {
    ran: hooks.length,
    blocked: null,
    permission: null,
    permissionReason: null,
    contexts: [],
    updatedInput: null,
    stop: null,
    warnings: [],
  };
  if (!hooks.length) return verdict;
  await writeTranscript(context).catch((error: Error) =>
    context.log.warn(`hooks: cannot write ${context.transcriptPath}: ${error.message}`),
  );
  const hookInput: BhrainHookInput = {
    session_id: context.sessionUuid,
    transcript_path: context.transcriptPath,
    cwd: context.cwd,
    hook_event_name: event,
    ...input.fields,
  };
  const ends = await Promise.all(
    hooks.map(async (hook) => {
      const about = {
        sessionUuid: context.sessionUuid,
        hookEventName: event,
        hookName: hook.name,
        ...(toolName ? { toolName } : {}),
        ...(input.callId ? { callId: input.callId } : {}),
      };
      context.emit({ type: 'HookStarted', ...about, occurredAt: new Date().toISOString() });
      const end = await runOne(hook, hookInput, context.signal);
      const decision = decisionOf(end.output, end.failure);
      context.log.info(
        `hook ${event} '${hook.name}': ${end.failure ? `failed (${end.failure})` : (decision ?? 'ok')}, ${end.durationMs} ms`,
      );
      context.emit({
        type: 'HookCompleted',
        ...about,
        durationMs: end.durationMs,
        exitCode: end.output?.exitCode ?? (end.failure ? null : 0),
        decision,
        ...(end.failure ? { error: context.redact(end.failure) } : {}),
        occurredAt: new Date().toISOString(),
      });
      return { hook, ...end };
    }),
  );
  const blocks: string[] = [];
  const asks: string[] = [];
  const allows: string[] = [];
  for (const { hook, output, failure } of ends) {
    if (failure) {
      verdict.warnings.push(`${event} hook '${hook.name}' failed: ${failure}`);
      if (event === 'PreToolUse')
        blocks.push(`the PreToolUse hook '${hook.name}' failed (${failure}), so the call is denied (hooks fail closed)`);
      continue;
    }
    if (!output) continue;
    const specific = output.hookSpecificOutput;
    if (output.systemMessage) verdict.warnings.push(output.systemMessage);
    if (output.continue === false) verdict.stop ??= output.stopReason || `a ${event} hook ('${hook.name}') stopped the session`;
    if (specific?.additionalContext) verdict.contexts.push(specific.additionalContext);
    const permission =
      specific?.permissionDecision ?? (output.decision === 'approve' ? 'allow' : output.decision === 'block' ? 'deny' : undefined);
    const reason =
      specific?.permissionDecisionReason ||
      output.reason ||
      `the ${event} hook '${hook.name}' ${permission === 'deny' ? 'blocked it' : `said ${permission ?? 'so'}`}`;
    if (permission === 'deny') blocks.push(reason);
    else if (permission === 'ask') asks.push(reason);
    else if (permission === 'allow') allows.push(reason);
    if (specific?.updatedInput && typeof specific.updatedInput === 'object') verdict.updatedInput ??= specific.updatedInput;
  }
  // where a block has nothing to stop, it is shown to the user (Claude Code's "stderr to the user only")
  if (blocks.length && INFORM_ONLY.has(event))
    verdict.warnings.push(`a ${event} hook blocked, which ${event} cannot be: ${blocks.join('; ')}`);
  else if (blocks.length) verdict.blocked = context.redact(blocks.join('; '));
  else if (asks.length) [verdict.permission, verdict.permissionReason] = ['ask', asks.join('; ')];
  else if (allows.length) [verdict.permission, verdict.permissionReason] = ['allow', allows.join('; ')];
  verdict.contexts = verdict.contexts.map((text) => context.redact(text));
  for (const warning of verdict.warnings) context.log.warn(context.redact(warning));
  if (verdict.stop) verdict.stop = context.redact(verdict.stop);
  return verdict;
};

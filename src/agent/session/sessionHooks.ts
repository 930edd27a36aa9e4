import { join } from 'node:path';

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import type { BhrainHookEventName, BhrainHookInput } from '../hooks/BhrainHook.js';
import { CLAUDE_CODE_TOOL_NAMES, hookToolInput, runHooks, toolInputOfHook, type HookVerdict } from '../hooks/runHooks.js';
import type { BhrainPermissionDecision } from '../permission/BhrainPermissionGuard.js';
import type { PreparedToolCall } from '../tool/executeTool.js';
import type { SessionState } from './SessionState.js';

// loaded only when the config has hooks (runTurn, runSession, consultMemory, finishSession import it on demand)

/** .what = the fields of a hook's input an event adds to the session's own */
export type HookFields = Omit<BhrainHookInput, 'session_id' | 'transcript_path' | 'cwd' | 'hook_event_name'>;

/** .what = runs the hooks of one event of a session; runs them with the session's hook context */
export type SessionHooksRun = (event: BhrainHookEventName, fields: HookFields, callId?: string) => Promise<HookVerdict>;

/** .what = the file transcript_path names: the session's messages as JSONL, in its spill dir (the run record's, in the CLI) */
const transcriptPathOf = (state: SessionState): string => join(state.context.spillDir, 'hooks-transcript.jsonl');

/**
 * .what = runs a session's hooks of one event; a hook that says continue: false asks the session to stop at its next
 *         boundary (terminated, with the stopReason)
 */
export const runSessionHooks = async (state: SessionState, event: BhrainHookEventName, fields: HookFields, callId?: string) => {
  const verdict = await runHooks(
    { event, fields, callId },
    {
      hooks: state.config.hooks ?? {},
      sessionUuid: state.uuid,
      cwd: state.context.cwd,
      transcriptPath: transcriptPathOf(state),
      messages: () => state.messages,
      emit: state.emit,
      log: state.context.log,
      redact: state.context.redact,
      // SessionEnd runs after a stop too: only its timeout bounds it
      signal: event === 'SessionEnd' ? undefined : state.stop.signal,
    },
  );
  if (verdict.stop) state.terminateRequest ??= { reason: `a ${event} hook stopped the session: ${verdict.stop}` };
  return verdict;
};

/** .what = the session's hook runner for the tool calls of a turn, or null when it has none */
export const sessionHooksOf =
  (state: SessionState): SessionHooksRun =>
  (event, fields, callId) =>
    runSessionHooks(state, event, fields, callId);

/** .what = a tool's name as hooks are given it: Claude Code's where one maps */
export const hookToolName = (name: string): string => CLAUDE_CODE_TOOL_NAMES[name] ?? name;

type Prepared = Extract<PreparedToolCall, { ok: true }>;
type Consulted = { decision: BhrainPermissionDecision } | { failed: Error };

/** .what = what the PreToolUse gate leaves to the permission check: the call (maybe with the hook's input), and the hook's say */
export type PreToolUseGate =
  | { answer: { success: false; output: string; denied?: { by: 'hook'; reason: string } } }
  | {
      call: BrainToolCall;
      prepared: Prepared;
      consulted: Consulted;
      hook: { decision: 'allow' | 'ask'; reason: string } | null;
      contexts: string[];
    };

/**
 * .what = the PreToolUse hooks of one call, after the guard: a call the guard denies runs no hook and stays denied; a
 *         hook's deny (exit 2, decision block, permissionDecision deny) or failure denies it; an updatedInput is checked
 *         again against the tool's schema and by the guard; the hook's allow or ask goes to the permission check, where
 *         an allow never passes a deny, the protected paths, or a write outside the workspace
 */
export const gatePreToolUse = async (input: {
  call: BrainToolCall;
  prepared: Prepared;
  hooks: SessionHooksRun;
  cwd: string;
  consult: (call: BrainToolCall, prepared: Prepared) => Promise<Consulted>;
  reprepare: (call: BrainToolCall) => Promise<PreparedToolCall>;
}): Promise<PreToolUseGate> => {
  const { call, prepared } = input;
  const consulted = await input.consult(call, prepared);
  if ('failed' in consulted || consulted.decision.decision === 'deny') return { call, prepared, consulted, hook: null, contexts: [] };
  const given = hookToolInput(call.name, call.input, input.cwd);
  const verdict = await input.hooks('PreToolUse', { tool_name: hookToolName(call.name), tool_input: given, tool_use_id: call.id }, call.id);
  if (verdict.blocked)
    return {
      answer: {
        success: false,
        output: `permission denied: a PreToolUse hook blocked ${call.name}: ${verdict.blocked}. ${call.name} was not run; adjust your approach.`,
        denied: { by: 'hook', reason: verdict.blocked },
      },
    };
  const hook = verdict.permission ? { decision: verdict.permission, reason: verdict.permissionReason ?? '' } : null;
  if (!verdict.updatedInput) return { call, prepared, consulted, hook, contexts: verdict.contexts };
  const changed: BrainToolCall = { ...call, input: toolInputOfHook(call.name, verdict.updatedInput, given) };
  const again = await input.reprepare(changed);
  if (!again.ok)
    return {
      answer: { success: false, output: `${call.name} was not run: a PreToolUse hook's updatedInput is not valid for it: ${again.output}` },
    };
  return { call: changed, prepared: again, consulted: await input.consult(changed, again), hook, contexts: verdict.contexts };
};

/** .what = the context hooks add to the first prompt, marked as theirs */
const withContext = (prompt: string, contexts: readonly string[]): string =>
  contexts.length ? `${prompt}\n\n<hook-context>\n${contexts.join('\n\n')}\n</hook-context>` : prompt;

/**
 * .what = a top-level session's opening hooks: SessionStart (startup, or resume when it continues earlier messages), then
 *         UserPromptSubmit; their added context (plain stdout, or additionalContext) goes with the prompt; a
 *         UserPromptSubmit block (exit 2, decision block) refuses the prompt: the session runs no turn
 */
export const openWithHooks = async (
  state: SessionState,
  prompt: string,
  resumed: boolean,
): Promise<{ content: string; blocked: string | null }> => {
  const start = await runSessionHooks(state, 'SessionStart', { source: resumed ? 'resume' : 'startup' });
  const submit = await runSessionHooks(state, 'UserPromptSubmit', { prompt });
  if (submit.blocked) {
    const blocked = `a UserPromptSubmit hook blocked the prompt: ${submit.blocked}`;
    state.context.log.warn(blocked);
    return { content: prompt, blocked };
  }
  return { content: withContext(prompt, [...start.contexts, ...submit.contexts]), blocked: null };
};

/** .what = how many times in a row Stop hooks may make one session go on before it ends anyway */
export const MAX_STOP_HOOK_CONTINUES = 3;
const stopContinues = new WeakMap<SessionState, number>();

/**
 * .what = the Stop hooks of a session that completed (SubagentStop in a subagent's): when one blocks (exit 2, decision
 *         block), the user message the session goes on with (its reason); null when the session may end
 * .why = a hook can hold a session to its task ("the tests still fail"), yet not forever: stop_hook_active tells it that
 *        it already did, and after MAX_STOP_HOOK_CONTINUES the session ends with a warning
 */
export const stopWithHooks = async (state: SessionState, input: { stopHookActive: boolean }): Promise<string | null> => {
  const event = state.depth === 0 ? 'Stop' : 'SubagentStop';
  const verdict = await runSessionHooks(state, event, { stop_hook_active: input.stopHookActive });
  if (!verdict.blocked || verdict.stop) return null;
  const made = stopContinues.get(state) ?? 0;
  if (made >= MAX_STOP_HOOK_CONTINUES) {
    state.context.log.warn(
      `a ${event} hook blocked the end again (${verdict.blocked}); the session ends anyway: it already went on ${MAX_STOP_HOOK_CONTINUES} times for its Stop hooks`,
    );
    return null;
  }
  stopContinues.set(state, made + 1);
  return `A ${event} hook did not let you stop yet: ${verdict.blocked}`;
};

/**
 * .what = a call's result with its PostToolUse hooks heard: a hook's complaint (exit 2, decision block) and any
 *         additionalContext (PreToolUse's too) are added after the output the model reads
 * .why = a formatter or linter run after an edit feeds its complaint back, and the model fixes it in its next turn
 */
export const withPostToolUse = async <TResult extends { success: boolean; output: string; exitCode?: number | null }>(input: {
  call: BrainToolCall;
  result: TResult;
  hooks: SessionHooksRun;
  cwd: string;
  contexts: readonly string[];
}): Promise<TResult> => {
  const { call, result } = input;
  const after = await input.hooks(
    'PostToolUse',
    {
      tool_name: hookToolName(call.name),
      tool_input: hookToolInput(call.name, call.input, input.cwd),
      tool_use_id: call.id,
      tool_response: {
        success: result.success,
        output: result.output,
        ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      },
    },
    call.id,
  );
  const added = [...input.contexts, ...(after.blocked ? [`PostToolUse hook feedback: ${after.blocked}`] : []), ...after.contexts];
  return added.length ? { ...result, output: `${result.output}\n\n${added.join('\n\n')}` } : result;
};

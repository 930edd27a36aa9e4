/**
 * .what = the moments of a session a hook can run at, by Claude Code's names
 * .note = SubagentStop is Stop in a subagent's session; PreCompact runs before the memory manager replaces the context
 */
export const BHRAIN_HOOK_EVENT_NAMES = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'SessionEnd',
] as const;
export type BhrainHookEventName = (typeof BHRAIN_HOOK_EVENT_NAMES)[number];

/**
 * .what = what a hook is given: the object a command hook reads as JSON on stdin, with Claude Code's field names
 * .note = tool_name is Claude Code's name where one maps (Bash, Edit, Write, Read, Glob, Grep, WebSearch, Task), else
 *         bhrain's; tool_input carries file_path (absolute) beside path for read, write and edit, as Claude Code's does
 */
export interface BhrainHookInput {
  session_id: string;
  /** a JSONL file of the session's messages so far (one message a line), written before the hook runs */
  transcript_path: string;
  cwd: string;
  hook_event_name: BhrainHookEventName;
  /** PreToolUse, PostToolUse */
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_use_id?: string;
  /** PostToolUse: the result the model reads: { success, output, exitCode? } */
  tool_response?: { success: boolean; output: string; exitCode?: number | null };
  /** UserPromptSubmit */
  prompt?: string;
  /** Stop, SubagentStop: true when a Stop hook already made the session go on once */
  stop_hook_active?: boolean;
  /** SessionStart: startup, or resume (the session continues earlier messages) */
  source?: 'startup' | 'resume';
  /** PreCompact: always auto (bhrain compacts on its own) */
  trigger?: 'auto';
  /** SessionEnd: how the session ended (its termination: complete, max-iterations, budget, error, ...) */
  reason?: string;
}

/**
 * .what = what a hook answers: the object a command hook prints as JSON on stdout, in Claude Code's shape
 * .note = exitCode is bhrain's own: a command hook's exit code, kept for the record (HookCompleted)
 */
export interface BhrainHookOutput {
  /** false: the session stops at its next boundary, stopReason shown to the user */
  continue?: boolean;
  stopReason?: string;
  /** a warning shown to the user */
  systemMessage?: string;
  suppressOutput?: boolean;
  /** block: PreToolUse denies the call, PostToolUse feeds reason to the model, Stop makes the session go on with reason,
   *  UserPromptSubmit refuses the prompt; approve: PreToolUse allows (as permissionDecision allow) */
  decision?: 'block' | 'approve';
  reason?: string;
  hookSpecificOutput?: {
    hookEventName?: string;
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    additionalContext?: string;
    /** PreToolUse: the call's input replaced (checked again against the tool's schema, the guard and the hidden paths) */
    updatedInput?: Record<string, unknown>;
  };
  exitCode?: number;
}

/**
 * .what = one hook: a function over the input, with the event's matcher and its own timeout
 * .why = the library's form of a hook; the CLI turns each command hook of the settings files into one of these
 * .note = return an output (or nothing, as a command that exits 0 and prints nothing). Throwing, or running past
 *         timeoutMs, is a failed hook: reported to the user, and for PreToolUse the call is denied (fails closed)
 */
export interface BhrainHook {
  /** shown in the events and messages (a command hook's command) */
  name: string;
  /** PreToolUse, PostToolUse: a regex over the tool's name, matched whole and case-insensitively against both its
   *  bhrain and its Claude Code name; absent, '' or '*' matches every tool */
  matcher?: string;
  /** default 60 s */
  timeoutMs?: number;
  run: (input: BhrainHookInput, context: { signal: AbortSignal }) => Promise<BhrainHookOutput | void> | BhrainHookOutput | void;
}

/** .what = hooks by event; the hooks of one event run in parallel */
export type BhrainHooks = Partial<Record<BhrainHookEventName, readonly BhrainHook[]>>;

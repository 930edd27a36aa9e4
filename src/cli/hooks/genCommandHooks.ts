import type { BhrainHook, BhrainHookEventName, BhrainHookInput, BhrainHookOutput, BhrainHooks } from '../../agent/hooks/BhrainHook.js';
import { withoutSupplierKeys } from '../../core/secrets/genSecretRedactor.js';
import type { BashStreamText } from '../../process/BashStreamText.js';
import { findHostProgram } from '../../process/findHostProgram.js';
import { spawnGroup } from '../../process/spawnGroup.js';
import type { HooksSettings } from './HooksSettings.js';

// loaded by runSkill only when a settings file has hooks: a run without any never loads this module

/** .what = how much of each stream of a command hook is kept (its head and its tail) */
export const HOOK_OUTPUT_MAX_BYTES = 64 * 1024;

/** .what = between SIGTERM and SIGKILL, for a hook's group at its timeout */
const HOOK_KILL_GRACE_MS = 2_000;

/** .what = a command hook's timeout when it names none: Claude Code's 60 s */
const DEFAULT_TIMEOUT_S = 60;

/** .what = the events whose plain stdout (exit 0) is added context, as in Claude Code */
const STDOUT_IS_CONTEXT: ReadonlySet<BhrainHookEventName> = new Set(['SessionStart', 'UserPromptSubmit']);

/** .what = a captured stream as text: head and tail, with a line saying how much was dropped between */
const textOf = (stream: BashStreamText): string =>
  stream.droppedBytes === 0
    ? stream.head + stream.tail
    : `${stream.head}\n[... ${stream.droppedBytes} bytes of the hook's output dropped: ${stream.totalBytes} bytes in all ...]\n${stream.tail}`;

/** .what = a hook's stdout as Claude Code reads it: a JSON object when it is one, else plain text */
const readStdout = (text: string): Record<string, unknown> | null => {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const json: unknown = JSON.parse(trimmed);
    return json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/**
 * .what = what a command's end means, in Claude Code's contract: exit 0 (its JSON, or its stdout as context where
 *         Claude Code adds it), exit 2 (a block, stderr the reason), another code (a warning); a signal, a code above
 *         128 (killed), a timeout or a failed start is a failed hook (thrown)
 */
const outputOf = (
  end: Awaited<ReturnType<typeof spawnGroup>['ended']>,
  input: { name: string; event: BhrainHookEventName; timeoutMs: number },
): BhrainHookOutput => {
  if (end.spawnError) throw new Error(`could not start: ${end.spawnError}`);
  if (end.timedOut) throw new Error(`timed out after ${input.timeoutMs} ms; its process group was killed`);
  if (end.aborted) throw new Error('stopped: the run ended or its timeout passed; its process group was killed');
  if (end.exitSignal) throw new Error(`killed by ${end.exitSignal}`);
  const code = end.exitCode ?? -1;
  const stdout = textOf(end.stdout);
  const stderr = textOf(end.stderr).trim();
  if (code > 128) throw new Error(`exited ${code} (killed by signal ${code - 128})${stderr ? `: ${stderr}` : ''}`);
  if (code === 2) return { decision: 'block', reason: stderr || `the hook '${input.name}' exited 2`, exitCode: 2 };
  if (code !== 0) return { systemMessage: `hook '${input.name}' exited ${code}${stderr ? `: ${stderr}` : ''}`, exitCode: code };
  const json = readStdout(stdout);
  if (json) return { ...(json as BhrainHookOutput), exitCode: 0 };
  if (STDOUT_IS_CONTEXT.has(input.event) && stdout.trim())
    return { hookSpecificOutput: { hookEventName: input.event, additionalContext: stdout.trim() }, exitCode: 0 };
  return { exitCode: 0 };
};

/**
 * .what = one command hook as a function: `bash -c <command>` in its own process group, the input as JSON on stdin, its
 *         streams kept within HOOK_OUTPUT_MAX_BYTES, stopped (the whole group, TERM then KILL) at its timeout
 * .why = the agent layer knows hooks only as functions; the process care is spawnGroup's, as for bash and MCP servers
 */
const genCommandHook = (
  setting: { command: string; timeout?: number; matcher?: string },
  event: BhrainHookEventName,
  context: { cwd: string; projectDir: string; env: Record<string, string | undefined> },
): BhrainHook => {
  const timeoutMs = Math.round((setting.timeout ?? DEFAULT_TIMEOUT_S) * 1000);
  // a hook never gets the supplier keys; it gets the project's root by both names (reused Claude Code scripts read theirs)
  const env = { ...withoutSupplierKeys(context.env), BHRAIN_PROJECT_DIR: context.projectDir, CLAUDE_PROJECT_DIR: context.projectDir };
  return {
    name: setting.command,
    ...(setting.matcher === undefined ? {} : { matcher: setting.matcher }),
    timeoutMs,
    run: async (input: BhrainHookInput, { signal }) => {
      const group = spawnGroup({
        // bash itself never from a PATH entry inside the workspace (node_modules/.bin under `npm run`): a model could plant it
        command:
          findHostProgram({ name: 'bash', path: context.env.PATH, untrusted: [context.cwd, context.projectDir] }) ??
          'bash: not on PATH outside the workspace',
        args: ['-c', setting.command],
        cwd: context.cwd,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        capture: { stdout: { maxBytes: HOOK_OUTPUT_MAX_BYTES }, stderr: { maxBytes: HOOK_OUTPUT_MAX_BYTES } },
        timeoutMs,
        signal,
        killGraceMs: HOOK_KILL_GRACE_MS,
        closeGraceMs: HOOK_KILL_GRACE_MS,
      });
      // a hook that does not read its stdin (or exits first) must not fail the write
      group.child.stdin?.on('error', () => {});
      group.child.stdin?.end(JSON.stringify(input));
      return outputOf(await group.ended, { name: setting.command, event, timeoutMs });
    },
  };
};

/**
 * .what = the command hooks of the settings files (the user's, then each approved project's) as the library's hooks
 * .note = hooks of every file run: Claude Code merges the hooks of its settings files the same way
 */
export const genCommandHooks = (
  input: { settings: ReadonlyArray<{ hooks: HooksSettings }> },
  context: { cwd: string; projectDir: string; env: Record<string, string | undefined> },
): BhrainHooks => {
  const hooks: Partial<Record<BhrainHookEventName, BhrainHook[]>> = {};
  for (const { hooks: byEvent } of input.settings)
    for (const [event, groups] of Object.entries(byEvent) as Array<[BhrainHookEventName, NonNullable<HooksSettings['Stop']>]>)
      for (const group of groups)
        for (const hook of group.hooks) (hooks[event] ??= []).push(genCommandHook({ ...hook, matcher: group.matcher }, event, context));
  return hooks;
};

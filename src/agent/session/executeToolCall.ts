import { resolve } from 'node:path';

import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { redactDeep } from '../../core/secrets/redactDeep.js';
import type { BrainToolCall, BrainToolMessage } from '../../core/contract/BrainMessage.js';
import type { ReadDenial } from '../../sandbox/resolveHiddenPaths.js';
import type { BhrainDenialSource } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import type { BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import type { BhrainSessionApprovals } from '../permission/genSessionApprovals.js';
import { BhrainToolFatalError } from '../tool/BhrainToolError.js';
import type { BhrainToolContext, BhrainToolResult } from '../tool/defineTool.js';
import { prepareToolCall, runPreparedCall, toolOfBox, type PreparedToolCall } from '../tool/executeTool.js';
import type { BhrainToolRegistry } from '../tool/genToolRegistry.js';
import { truncateToolOutput } from '../tool/truncateToolOutput.js';
import { displayPath } from '../toolboxes/files/toolPaths.js';
import { genHiddenPathsOf, refuseHiddenPath } from '../toolboxes/files/hiddenPaths.js';
import type { WriteToolContext } from '../toolboxes/files/openInsideWorkspace.js';
import { consultGuard } from '../permission/BhrainPermission.js';
import { checkPermission } from './checkPermission.js';
import type { SessionHooksRun } from './sessionHooks.js';

/** .what = what executing one call needs from the session */
export interface ToolCallSession {
  sessionUuid: string;
  registry: BhrainToolRegistry;
  guard: BhrainPermissionGuard;
  prompter: BhrainPrompter | null;
  /** approvals a person gave "for this session" at a prompt; they answer later prompts they cover */
  approvals?: BhrainSessionApprovals | null;
  toolContext: BhrainToolContext;
  guardTimeoutMs: number;
  maxToolOutputChars: number;
  spillDir: string;
  log: BrainLog;
  emit: (event: BhrainEvent) => void;
  /** removes secret values from tool input and output before the model, the log or a spill file sees them */
  redact: SecretRedactor;
  /** the paths hidden from the model beyond the defaults, and those handed back (the config's; absent = the defaults) */
  readDenial?: ReadDenial;
  /** the session's hooks (PreToolUse, PostToolUse); absent or null = none, and no hook code is loaded */
  hooks?: SessionHooksRun | null;
}

/**
 * .what = one call answered: the result message the model reads, who denied the call and why when it was denied, and the
 *         error that ends the session when the tool threw a BhrainToolFatalError
 */
export interface ToolCallOutcome {
  message: BrainToolMessage;
  denied: null | { by: BhrainDenialSource; reason: string };
  fatal?: BhrainToolFatalError;
}

/** .what = the result of one call before truncation */
type CallAnswer = Omit<BhrainToolResult, 'callId'> & { denied?: ToolCallOutcome['denied']; fatal?: BhrainToolFatalError };

/**
 * .what = the refusal of a call that names a path hidden from the model (a credential store, $BHRAIN_HOME, denyRead),
 *         or null
 * .why = every tool that declares its paths is refused the same way, custom ones too; the files tools also refuse on
 *        their own, and glob and grep walk past hidden paths
 */
const refuseHiddenPaths = (prepared: Extract<PreparedToolCall, { ok: true }>, session: ToolCallSession): string | null => {
  if (!prepared.paths.length) return null;
  const { cwd } = session.toolContext;
  // the same resolution the files tools make for themselves, from the session's denial
  const hidden = genHiddenPathsOf(session.readDenial ?? {})(session.toolContext);
  for (const { path, access } of prepared.paths) {
    const absolute = resolve(cwd, path);
    const refusal = refuseHiddenPath({ path: absolute, shown: displayPath(absolute, cwd), action: access, hidden });
    if (refusal) return refusal;
  }
  return null;
};

/** .what = the answer to one call: not run (skipped, aborted, unknown, invalid, denied, hidden), failed, or executed */
const answerCall = async (asked: BrainToolCall, session: ToolCallSession, notRun: string | null): Promise<CallAnswer> => {
  let call = asked;
  if (notRun) return { success: false, output: notRun };
  // calls wait for earlier ones in the turn (runToolCalls): none starts once the session was aborted
  if (session.toolContext.signal?.aborted)
    return { success: false, output: `${call.name} was not run: the session was aborted before this call's turn came.` };
  const { registry } = session;
  const prepare = (which: BrainToolCall) =>
    prepareToolCall({
      call: which,
      find: (name) => {
        const box = registry.find(name);
        return box ? toolOfBox(box, name) : null;
      },
      offered: () => registry.definitions().map((definition) => definition.name),
      cwd: session.toolContext.cwd,
    });
  const first = await prepare(call);
  if (!first.ok) return { success: false, output: first.output };
  // PreToolUse hooks, after the guard's deny (loaded only when the session has hooks)
  const gate = session.hooks
    ? await (
        await import('./sessionHooks.js')
      ).gatePreToolUse({
        call,
        prepared: first,
        hooks: session.hooks,
        cwd: session.toolContext.cwd,
        consult: (which, prepared) =>
          consultGuard({
            call: which,
            guard: session.guard,
            effect: prepared.effect,
            paths: prepared.paths,
            cwd: session.toolContext.cwd,
            timeoutMs: session.guardTimeoutMs,
          }),
        reprepare: prepare,
      })
    : null;
  if (gate && 'answer' in gate) return gate.answer;
  const prepared = gate?.prepared ?? first;
  call = gate?.call ?? call;
  const permission = await checkPermission({
    call,
    effect: prepared.effect,
    paths: prepared.paths,
    guard: session.guard,
    prompter: session.prompter,
    approvals: session.approvals,
    cwd: session.toolContext.cwd,
    addDirs: session.toolContext.addDirs,
    guardTimeoutMs: session.guardTimeoutMs,
    log: session.log,
    consulted: gate?.consulted,
    hook: gate?.hook,
  });
  if (!permission.allowed) return { success: false, output: permission.denial, denied: { by: permission.by, reason: permission.reason } };
  const hidden = refuseHiddenPaths(prepared, session);
  if (hidden) return { success: false, output: hidden };
  let result: Omit<BhrainToolResult, 'callId'>;
  try {
    // write and edit make sure, as they open it, that the file is the one judged here (see openInsideWorkspace)
    const toolContext: WriteToolContext = { ...session.toolContext, writeCheck: permission.writeCheck };
    const { callId: _callId, ...ran } = await runPreparedCall(prepared, call, toolContext);
    result = ran;
  } catch (error) {
    // only a BhrainToolFatalError gets here: the call still gets its result, then the session ends
    const fatal = error as BhrainToolFatalError;
    session.log.error(`tool ${call.name} ended the session: ${fatal.message}`, { callId: call.id });
    return { success: false, output: `${call.name} failed, and the session ends here: ${fatal.message}`, fatal, malfunction: true };
  }
  if (!session.hooks) return result;
  // PostToolUse: a hook's complaint and added context go with the result the model reads (with PreToolUse's context)
  return (await import('./sessionHooks.js')).withPostToolUse({
    call,
    result,
    hooks: session.hooks,
    cwd: session.toolContext.cwd,
    contexts: gate && 'contexts' in gate ? gate.contexts : [],
  });
};

/**
 * .what = answers one tool call: lookup, input check, permission, execution, truncation, log and events
 * .why = every call gets exactly one result, whatever fails along the way, and says whether it was denied and by whom;
 *        a notice (the loop's runaway notice) is appended after truncation, so the result and its event say the same
 */
export const executeToolCall = async (
  call: BrainToolCall,
  session: ToolCallSession,
  notice: string | null = null,
  /** why the call is answered without being run (an earlier call of the turn ended the session), or null */
  notRun: string | null = null,
): Promise<ToolCallOutcome> => {
  const started = performance.now();
  const input = redactDeep(call.input, session.redact);
  session.log.info(`tool call ${call.name}`, { callId: call.id, input });
  session.emit({
    type: 'ToolCallStarted',
    sessionUuid: session.sessionUuid,
    callId: call.id,
    toolName: call.name,
    input,
    occurredAt: new Date().toISOString(),
  });
  const result = await answerCall(call, session, notRun);
  const denied = result.denied ? { by: result.denied.by, reason: session.redact(result.denied.reason) } : null;
  const cut = await truncateToolOutput({
    output: result.output,
    redact: session.redact,
    maxChars: session.maxToolOutputChars,
    spillDir: session.spillDir,
    callId: call.id,
    toolName: call.name,
  });
  const content = notice ? `${cut.output}\n\n${notice}` : cut.output;
  // cut by the tool itself (bash's bounded capture) or here
  const truncated = result.truncated === true || cut.truncated;
  const exitCode = result.exitCode;
  const fields = { ...(truncated ? { truncated } : {}), ...(exitCode !== undefined ? { exitCode } : {}) };
  const durationMs = Math.round(performance.now() - started);
  session.log.info(`tool result ${call.name} (${result.success ? 'ok' : 'error'}, ${durationMs} ms)`, {
    callId: call.id,
    success: result.success,
    output: cut.output,
    ...fields,
    ...(denied ? { denied } : {}),
    ...(cut.fullOutputPath ? { fullOutputPath: cut.fullOutputPath } : {}),
  });
  session.emit({
    type: 'ToolExecutionCompleted',
    sessionUuid: session.sessionUuid,
    callId: call.id,
    toolName: call.name,
    durationMs,
    success: result.success,
    output: content,
    isError: !result.success,
    ...fields,
    ...(result.protectedChanges?.length ? { protectedChanges: result.protectedChanges } : {}),
    denied,
    occurredAt: new Date().toISOString(),
  });
  return {
    message: {
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content,
      isError: !result.success,
      ...fields,
      ...(result.malfunction && !result.success ? { malfunction: true as const } : {}),
    },
    denied,
    ...(result.fatal ? { fatal: result.fatal } : {}),
  };
};

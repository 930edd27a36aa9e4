import type { BrainLog } from '../../core/contract/BrainContext.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { redactDeep } from '../../core/secrets/redactDeep.js';
import type { BrainToolCall, BrainToolMessage } from '../../core/contract/BrainMessage.js';
import type { BhrainDenialSource } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import type { BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import type { BhrainSessionApprovals } from '../permission/genSessionApprovals.js';
import type { BhrainToolContext, BhrainToolResult } from '../tool/BhrainToolBox.js';
import type { WriteToolContext } from '../tools/files/openInsideWorkspace.js';
import type { BhrainToolRegistry } from '../tool/genToolRegistry.js';
import { truncateToolOutput } from '../tool/truncateToolOutput.js';
import { checkPermission } from './checkPermission.js';

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
}

/** .what = one call answered: the result message the model reads, and who denied the call and why when it was denied */
export interface ToolCallOutcome {
  message: BrainToolMessage;
  denied: null | { by: BhrainDenialSource; reason: string };
}

/** .what = the result of one call before truncation: refused, denied, failed or executed */
const runCall = async (
  call: BrainToolCall,
  session: ToolCallSession,
): Promise<Omit<BhrainToolResult, 'callId'> & { denied?: ToolCallOutcome['denied'] }> => {
  if (call.inputError) return { success: false, output: call.inputError };
  // calls wait for earlier ones in the turn (runToolCalls): none starts once the session was aborted
  if (session.toolContext.signal?.aborted)
    return { success: false, output: `${call.name} was not run: the session was aborted before this call's turn came.` };
  const box = session.registry.find(call.name);
  if (!box) {
    const available = session.registry.definitions().map((definition) => definition.name);
    return {
      success: false,
      output: `tool not found: '${call.name}'. Available tools: ${available.join(', ') || '(none)'}. Call one of these instead.`,
    };
  }
  const permission = await checkPermission({
    call,
    guard: session.guard,
    prompter: session.prompter,
    approvals: session.approvals,
    cwd: session.toolContext.cwd,
    guardTimeoutMs: session.guardTimeoutMs,
    log: session.log,
  });
  if (!permission.allowed) return { success: false, output: permission.denial, denied: { by: permission.by, reason: permission.reason } };
  try {
    // write and edit make sure, as they open it, that the file is the one judged here (see openInsideWorkspace)
    const toolContext: WriteToolContext = { ...session.toolContext, writeCheck: permission.writeCheck };
    const result = await box.execute({ call }, toolContext);
    return { ...result, output: String(result.output ?? '') };
  } catch (error) {
    // a throwing tool is a result the model reads, with the error itself, not a code
    session.log.error(`tool ${call.name} threw`, { callId: call.id, error: String((error as Error)?.stack ?? error) });
    return { success: false, output: `tool ${call.name} failed with an unexpected error: ${(error as Error)?.message ?? String(error)}` };
  }
};

/**
 * .what = answers one tool call: input check, lookup, permission, execution, truncation, log and events
 * .why = every call gets exactly one result, whatever fails along the way, and says whether it was denied and by whom;
 *        a notice (the loop's runaway notice) is appended after truncation, so the result and its event say the same
 */
export const executeToolCall = async (
  call: BrainToolCall,
  session: ToolCallSession,
  notice: string | null = null,
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
  const result = await runCall(call, session);
  const denied = result.denied ? { by: result.denied.by, reason: session.redact(result.denied.reason) } : null;
  const truncated = await truncateToolOutput({
    output: result.output,
    redact: session.redact,
    maxChars: session.maxToolOutputChars,
    spillDir: session.spillDir,
    callId: call.id,
    toolName: call.name,
  });
  const content = notice ? `${truncated.output}\n\n${notice}` : truncated.output;
  const durationMs = Math.round(performance.now() - started);
  session.log.info(`tool result ${call.name} (${result.success ? 'ok' : 'error'}, ${durationMs} ms)`, {
    callId: call.id,
    success: result.success,
    output: truncated.output,
    ...(denied ? { denied } : {}),
    ...(truncated.fullOutputPath ? { fullOutputPath: truncated.fullOutputPath } : {}),
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
    denied,
    occurredAt: new Date().toISOString(),
  });
  return { message: { role: 'tool', toolCallId: call.id, toolName: call.name, content, isError: !result.success }, denied };
};

import type { BrainLog } from '../../../contract/BrainContext.js';
import type { BrainToolCall, BrainToolMessage } from '../../../contract/BrainMessage.js';
import type { BhrainEvent } from '../events.js';
import type { BhrainPermissionGuard, BhrainPrompter } from '../permission/BhrainPermissionGuard.js';
import type { BhrainToolContext, BhrainToolResult } from '../tools/BhrainToolBox.js';
import type { BhrainToolRegistry } from '../tools/genToolRegistry.js';
import { truncateToolOutput } from '../tools/truncateToolOutput.js';
import { checkPermission } from './checkPermission.js';

/** .what = what executing one call needs from the session */
export interface ToolCallSession {
  sessionUuid: string;
  registry: BhrainToolRegistry;
  guard: BhrainPermissionGuard;
  prompter: BhrainPrompter | null;
  toolContext: BhrainToolContext;
  guardTimeoutMs: number;
  maxToolOutputChars: number;
  spillDir: string;
  log: BrainLog;
  emit: (event: BhrainEvent) => void;
  /** removes secret values from tool output before the model, the log or a spill file sees it */
  redact: (text: string) => string;
}

/** .what = the result of one call before truncation: refused, denied, failed or executed */
const runCall = async (call: BrainToolCall, session: ToolCallSession): Promise<Omit<BhrainToolResult, 'callId'>> => {
  if (call.inputError) return { success: false, output: call.inputError };
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
    cwd: session.toolContext.cwd,
    guardTimeoutMs: session.guardTimeoutMs,
    log: session.log,
  });
  if (!permission.allowed) return { success: false, output: permission.denial };
  try {
    const result = await box.execute({ call }, session.toolContext);
    return { ...result, output: String(result.output ?? '') };
  } catch (error) {
    // a throwing tool is a result the model reads, with the error itself, not a code
    session.log.error(`tool ${call.name} threw`, { callId: call.id, error: String((error as Error)?.stack ?? error) });
    return { success: false, output: `tool ${call.name} failed with an unexpected error: ${(error as Error)?.message ?? String(error)}` };
  }
};

/**
 * .what = answers one tool call: input check, lookup, permission, execution, truncation, log and event
 * .why = every call gets exactly one result, whatever fails along the way
 */
export const executeToolCall = async (call: BrainToolCall, session: ToolCallSession): Promise<BrainToolMessage> => {
  const started = performance.now();
  session.log.info(`tool call ${call.name}`, { callId: call.id, input: call.input });
  const result = await runCall(call, session);
  const truncated = await truncateToolOutput({
    output: session.redact(result.output),
    maxChars: session.maxToolOutputChars,
    spillDir: session.spillDir,
    callId: call.id,
    toolName: call.name,
  });
  const durationMs = Math.round(performance.now() - started);
  session.log.info(`tool result ${call.name} (${result.success ? 'ok' : 'error'}, ${durationMs} ms)`, {
    callId: call.id,
    success: result.success,
    output: truncated.output,
    ...(truncated.fullOutputPath ? { fullOutputPath: truncated.fullOutputPath } : {}),
  });
  session.emit({
    type: 'ToolExecutionCompleted',
    sessionUuid: session.sessionUuid,
    callId: call.id,
    toolName: call.name,
    durationMs,
    success: result.success,
    occurredAt: new Date().toISOString(),
  });
  return { role: 'tool', toolCallId: call.id, toolName: call.name, content: truncated.output, isError: !result.success };
};

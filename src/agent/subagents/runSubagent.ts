import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { silentLog, type BrainLog } from '../../core/contract/BrainContext.js';
import { AbortedError } from '../../core/contract/errors.js';
import { emptyTokens } from '../../core/contract/tokens.js';
import type { BhrainConfigResolved } from '../BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import type { BhrainSessionResult, BhrainSubagentRecord } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import { describeBudgetReached } from '../session/checkBudget.js';
import type { BhrainSpendLedger } from '../session/genSpendLedger.js';
import { readOnly } from '../permission/builtinGuards.js';
import type { BhrainSessionApprovals } from '../permission/genSessionApprovals.js';
import type { BhrainToolBox } from '../tool/BhrainToolBox.js';
import { genToolRegistry, type BhrainToolRegistry } from '../tool/genToolRegistry.js';
import { pickTools, withEffect } from '../tool/pickTools.js';
import type { runLoop } from '../session/runLoop.js';
import type { BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';
import { combineGuards } from './combineGuards.js';

/** .what = the loop a child runs in: runLoop, injected (a type-only import) so this module does not load the loop that loads it */
export type RunSession = typeof runLoop;

/** .what = what a child needs from the session that spawns it */
export interface SubagentParent {
  config: BhrainConfigResolved;
  /** the parent's toolboxes, without its task tool */
  registry: BhrainToolRegistry;
  sessionUuid: string;
  /** 0 for the session the caller started */
  depth: number;
  ledger: BhrainSpendLedger;
  /** what the user approved for the rest of the session: its children share it */
  approvals: BhrainSessionApprovals;
  context: BhrainContext;
  emit: (event: BhrainEvent) => void;
  run: RunSession;
}

/** .what = a log whose every line's meta names the subagent that wrote it */
const tagLog = (log: BrainLog, subagent: { type: string; sessionUuid: string }): BrainLog => {
  const at = (level: keyof BrainLog) => (message: string, meta?: Record<string, unknown>) => log[level](message, { ...meta, subagent });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
};

/** .what = the toolboxes a child of this type gets, from what the parent has now */
const pickChildToolBoxes = (type: BhrainSubagentTypeResolved, parent: readonly BhrainToolBox[]): readonly BhrainToolBox[] => {
  if (type.tools === 'parent') return parent;
  if (type.tools !== 'read-only') return type.tools;
  // the tools whose effect is read, from every box that has one: the files tools, websearch, an MCP server's read-only tools
  return parent.map((box) => pickTools(box, withEffect('read'))).filter((box) => box.definitions.length > 0);
};

/**
 * .what = the resolved config of a child: the type's atom, tools and system prompt; the parent's project instructions,
 *         memory manager, limits and maxIterations (per child); a guard that is the type's AND the parent's
 * .why = a child is never looser than its parent: read-only types are also judged by readOnly, and every type by the
 *        parent's guard; only types with write tools keep the task tool (below the depth limit)
 */
const configureChild = (
  type: BhrainSubagentTypeResolved,
  parent: BhrainConfigResolved,
  toolBoxes: readonly BhrainToolBox[],
): BhrainConfigResolved => {
  const atom = type.atom ?? parent.atom;
  const readOnlyType = type.tools === 'read-only';
  return {
    ...parent,
    atom,
    toolBoxes: [...toolBoxes],
    permissionGuard: readOnlyType ? combineGuards([readOnly, parent.permissionGuard]) : combineGuards([parent.permissionGuard]),
    systemPrompt: type.systemPrompt,
    instructions: parent.instructions,
    limits: { ...parent.limits, contextTokens: Math.min(parent.limits.contextTokens, atom.spec.contextWindowTokens) },
    subagents: readOnlyType ? null : parent.subagents,
  };
};

/** .what = what the parent's model reads when a child did not complete: why, and what it said before it stopped */
const describeFailure = (type: string, result: BhrainSessionResult, aborted: boolean): string => {
  const why =
    aborted || result.error instanceof AbortedError
      ? 'was interrupted before it finished'
      : result.termination === 'max-iterations'
        ? `stopped at its iteration limit (maxIterations ${result.iterations}) before it finished`
        : result.termination === 'budget' && result.budgetReached
          ? `stopped: ${describeBudgetReached(result.budgetReached)}`
          : result.termination === 'refusal'
            ? 'declined the task'
            : `failed: ${result.error?.message ?? result.termination}`;
  const said = result.output.trim();
  return `the ${type} subagent ${why}.${said ? `\nWhat it said before it stopped:\n${said}` : ''}`;
};

/**
 * .what = runs one child session of the parent's loop with a fresh context (no parent messages), and returns its record
 *         and the tool result the parent's model reads
 * .why = a failure of any kind (error, abort, limits, a throw before it started) is a failed result, never an exception
 *        that ends the parent; the child's events stay its own, except its subagents' start and end
 */
export const runSubagent = async (
  input: { callId: string; type: BhrainSubagentTypeResolved; description: string; prompt: string; signal?: AbortSignal },
  parent: SubagentParent,
): Promise<{ record: BhrainSubagentRecord; descendants: BhrainSubagentRecord[]; success: boolean; output: string }> => {
  const { type } = input;
  const sessionUuid = randomUUID();
  const config = configureChild(type, parent.config, pickChildToolBoxes(type, parent.registry.boxes()));
  const base = { sessionUuid, parentSessionUuid: parent.sessionUuid, callId: input.callId, subagentType: type.name };
  parent.emit({
    type: 'SubagentStarted',
    ...base,
    description: input.description,
    atom: config.atom.slug,
    occurredAt: new Date().toISOString(),
  });
  const started = performance.now();
  const context: BhrainContext = {
    ...parent.context,
    // the child's text and events are its own: the parent's stream shows only its start and end
    onTextDelta: undefined,
    onTextReset: undefined,
    onReasoningDelta: undefined,
    onEvent: undefined,
    signal: input.signal,
    // the child's lines keep their text (the CLI's progress log reads it) and say whose they are in their meta
    log: tagLog(parent.context.log ?? silentLog, { type: type.name, sessionUuid }),
    spillDir: parent.context.spillDir ? join(parent.context.spillDir, `subagent-${sessionUuid}`) : undefined,
  };
  let result: BhrainSessionResult;
  try {
    result = await parent.run({
      config,
      registry: genToolRegistry(config.toolBoxes),
      prompt: input.prompt,
      history: [],
      emit: (event) => void (event.type === 'SubagentStarted' || event.type === 'SubagentCompleted' ? parent.emit(event) : undefined),
      context,
      sessionUuid,
      depth: parent.depth + 1,
      ledger: parent.ledger,
      approvals: parent.approvals,
    });
  } catch (error) {
    // the child could not start (e.g. the prompt does not fit its atom's window): a failed result like any other
    const message = `the ${type.name} subagent could not start: ${(error as Error)?.message ?? error}`;
    const record: BhrainSubagentRecord = {
      ...base,
      type: type.name,
      description: input.description,
      prompt: input.prompt,
      status: 'FAILED',
      termination: 'error',
      output: '',
      iterations: 0,
      tokens: emptyTokens(),
      cash: null,
      elapsedMs: Math.round(performance.now() - started),
      transcript: [],
      atom: config.atom.slug,
    };
    const metrics = { iterations: 0, tokens: record.tokens, cash: null, elapsedMs: record.elapsedMs };
    parent.emit({
      type: 'SubagentCompleted',
      ...base,
      status: 'FAILED',
      termination: 'error',
      metrics,
      occurredAt: new Date().toISOString(),
    });
    return { record, descendants: [], success: false, output: message };
  }
  const completed = result.termination === 'complete';
  const record: BhrainSubagentRecord = {
    sessionUuid,
    parentSessionUuid: parent.sessionUuid,
    type: type.name,
    description: input.description,
    prompt: input.prompt,
    status: completed ? 'COMPLETED' : 'FAILED',
    termination: result.termination,
    output: result.output,
    iterations: result.iterations,
    tokens: result.tokens,
    cash: result.cash,
    elapsedMs: result.elapsedMs,
    transcript: result.transcript,
    atom: config.atom.slug,
  };
  parent.emit({
    type: 'SubagentCompleted',
    ...base,
    status: record.status,
    termination: record.termination,
    metrics: { iterations: record.iterations, tokens: record.tokens, cash: record.cash, elapsedMs: record.elapsedMs },
    occurredAt: new Date().toISOString(),
  });
  return {
    record,
    descendants: result.subagents,
    success: completed,
    output: completed ? result.output : describeFailure(type.name, result, input.signal?.aborted ?? false),
  };
};

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { silentLog, type BrainLog } from '../../core/contract/BrainContext.js';
import { AbortedError } from '../../core/contract/errors.js';
import { TASK_TOOL_NAME } from '../constants.js';
import { emptyTokens } from '../../core/contract/tokens.js';
import type { BhrainConfigResolved } from '../config/BhrainConfig.js';
import type { BhrainContext } from '../BhrainContext.js';
import { endBhrainSubagent, genBhrainSubagent, type BhrainSubagent } from '../BhrainSession.js';
import type { BhrainSessionResult } from '../BhrainSessionResult.js';
import type { BhrainEvent } from '../events.js';
import { describeBudgetReached } from '../session/checkBudget.js';
import type { ChildSessionInput } from '../session/SessionState.js';
import { readOnly } from '../permission/builtinGuards.js';
import type { BhrainSpawned, BhrainToolBox } from '../tool/BhrainToolBox.js';
import { toolOfBox } from '../tool/executeTool.js';
import { genToolRegistry } from '../tool/genToolRegistry.js';
import { pickTools } from '../tool/pickTools.js';
import { genToolset } from '../toolboxes/genToolset.js';
import type { BhrainSubagentTypeResolved } from './BhrainSubagentDefinition.js';
import { combineGuards } from './combineGuards.js';

/**
 * .what = what a subagent needs from the session that spawns it: who it is, what it has, how to run a child of it, and
 *         where the live subagent is published
 * .why = the session hands run and record in (its spawn capability), so this module never imports the loop
 */
export interface SubagentParent {
  uuid: string;
  /** the parent's config, with its memory manager and guard as they are now */
  config: BhrainConfigResolved;
  /** the parent's toolboxes, without its task tool */
  boxes: readonly BhrainToolBox[];
  context: BhrainContext;
  /** the parent's signal: aborting it stops the child too */
  signal: AbortSignal | undefined;
  emit: (event: BhrainEvent) => void;
  /** runs the child session as a fork of the parent's: its budget, approvals, signal, prompter and redactor */
  run: (child: ChildSessionInput) => Promise<BhrainSessionResult>;
  /** publishes the subagent as it stands (RUNNING, then ended) to the parent's session */
  record: (subagent: BhrainSubagent) => void;
}

/** .what = a log whose every line's meta names the subagent that wrote it */
const tagLog = (log: BrainLog, subagent: { type: string; sessionUuid: string }): BrainLog => {
  const at = (level: keyof BrainLog) => (message: string, meta?: Record<string, unknown>) => log[level](message, { ...meta, subagent });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
};

/**
 * .what = the toolboxes a child of this type gets, from what the parent has now: the parent's read-only tools, all of
 *         them, the type's own, or those of the parent's it names
 * .why = a type that names tools (an agent file's `tools:`) picks them from the parent's boxes, so it never gets a tool
 *        its parent lacks: under a read-only parent, a file that asks for bash does not get it
 */
const pickChildToolBoxes = (type: BhrainSubagentTypeResolved, parent: readonly BhrainToolBox[]): readonly BhrainToolBox[] => {
  if (type.tools === 'parent') return parent;
  if (type.tools === 'read-only') return genToolset({ access: 'read-only', boxes: parent });
  if (!('names' in type.tools)) return type.tools;
  const names = new Set(type.tools.names);
  return parent.map((box) => pickTools(box, (tool) => names.has(tool.name))).filter((box) => box.definitions.length > 0);
};

/** .what = whether a child with these tools is read-only: a read-only type, or one whose tools all only read */
const isReadOnlyChild = (type: BhrainSubagentTypeResolved, toolBoxes: readonly BhrainToolBox[]): boolean =>
  type.tools === 'read-only' ||
  (typeof type.tools === 'object' &&
    'names' in type.tools &&
    !type.tools.names.includes(TASK_TOOL_NAME) &&
    toolBoxes.every((box) => box.definitions.every((definition) => toolOfBox(box, definition.name).effect === 'read')));

/**
 * .what = the resolved config of a child: the type's atom, tools and system prompt; the parent's project instructions,
 *         memory manager, limits and maxIterations (per child); a guard that is the type's AND the parent's
 * .why = a child is never looser than its parent: read-only children are also judged by readOnly, and every child by the
 *        parent's guard; only children with write tools keep the task tool (below the depth limit), and a type that
 *        names its tools keeps it only when it names task
 */
const configureChild = (
  type: BhrainSubagentTypeResolved,
  parent: BhrainConfigResolved,
  toolBoxes: readonly BhrainToolBox[],
): BhrainConfigResolved => {
  const atom = type.atom ?? parent.atom;
  const readOnlyType = isReadOnlyChild(type, toolBoxes);
  const named = typeof type.tools === 'object' && 'names' in type.tools ? type.tools.names : null;
  return {
    ...parent,
    atom,
    toolBoxes: [...toolBoxes],
    permissionGuard: readOnlyType ? combineGuards([readOnly, parent.permissionGuard]) : combineGuards([parent.permissionGuard]),
    systemPrompt: type.systemPrompt,
    baseSystemPrompt: null,
    instructions: parent.instructions,
    limits: { ...parent.limits, contextTokens: Math.min(parent.limits.contextTokens, atom.spec.contextWindowTokens) },
    subagents: readOnlyType || (named && !named.includes(TASK_TOOL_NAME)) ? null : parent.subagents,
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
            : result.termination === 'terminated'
              ? `was terminated: ${result.terminationReason}`
              : `failed: ${result.error?.message ?? result.termination}`;
  const said = result.output.trim();
  return `the ${type} subagent ${why}.${said ? `\nWhat it said before it stopped:\n${said}` : ''}`;
};

/** .what = a child's own event to the context's onSubagentEvent; a listener that throws is logged, never stops the child */
const emitToSubagentListener = (parent: SubagentParent, event: BhrainEvent): void => {
  const listener = parent.context.onSubagentEvent;
  if (!listener) return;
  try {
    listener(event);
  } catch (error) {
    (parent.context.log ?? silentLog).error(`a subagent event listener threw on ${event.type}: ${(error as Error)?.message ?? error}`);
  }
};

/**
 * .what = runs one subagent: a child session of the parent's loop with a fresh context (no parent messages), published
 *         as a live entity (RUNNING, then COMPLETED or FAILED) before its start and after its end events
 * .why = a failure of any kind (error, abort, limits, a throw before it started) is a failed result, never an exception
 *        that ends the parent; the child's events stay its own, except its subagents' start and end
 */
export const runSubagent = async (
  input: { callId: string; type: BhrainSubagentTypeResolved; description: string; prompt: string },
  parent: SubagentParent,
): Promise<BhrainSpawned> => {
  const { type } = input;
  const uuid = randomUUID();
  const config = configureChild(type, parent.config, pickChildToolBoxes(type, parent.boxes));
  const running = genBhrainSubagent({
    uuid,
    sessionUuid: parent.uuid,
    type: type.name,
    prompt: input.prompt,
    description: input.description,
    atom: config.atom.slug,
  });
  parent.record(running);
  const base = { sessionUuid: uuid, parentSessionUuid: parent.uuid, callId: input.callId, subagentType: type.name };
  parent.emit({
    type: 'SubagentStarted',
    ...base,
    description: input.description,
    atom: config.atom.slug,
    occurredAt: new Date().toISOString(),
  });
  const started = performance.now();
  const result = await parent
    .run({
      uuid,
      config,
      registry: genToolRegistry(config.toolBoxes),
      prompt: input.prompt,
      // the child's lines say whose they are in their meta
      log: tagLog(parent.context.log ?? silentLog, { type: type.name, sessionUuid: uuid }),
      spillDir: parent.context.spillDir ? join(parent.context.spillDir, `subagent-${uuid}`) : undefined,
      // its subagents' start and end go to the parent's stream; the rest only to an onSubagentEvent listener (telemetry)
      emit: (event) =>
        event.type === 'SubagentStarted' || event.type === 'SubagentCompleted' ? parent.emit(event) : emitToSubagentListener(parent, event),
    })
    .catch((error: unknown) => ({ failedToStart: error }));
  const ended =
    'failedToStart' in result
      ? // the child could not start (e.g. the prompt does not fit its atom's window): a failed result like any other
        endBhrainSubagent(running, {
          termination: 'error',
          output: '',
          result: `the ${type.name} subagent could not start: ${(result.failedToStart as Error)?.message ?? result.failedToStart}`,
          iterations: 0,
          tokens: emptyTokens(),
          cash: null,
          elapsedMs: Math.round(performance.now() - started),
          transcript: [],
        })
      : endBhrainSubagent(running, {
          termination: result.termination,
          output: result.output,
          result: result.termination === 'complete' ? result.output : describeFailure(type.name, result, parent.signal?.aborted ?? false),
          iterations: result.iterations,
          tokens: result.tokens,
          cash: result.cash,
          elapsedMs: result.elapsedMs,
          transcript: result.transcript,
        });
  parent.record(ended);
  parent.emit({
    type: 'SubagentCompleted',
    ...base,
    status: ended.status === 'COMPLETED' ? 'COMPLETED' : 'FAILED',
    termination: ended.termination ?? 'error',
    metrics: { iterations: ended.iterations, tokens: ended.tokens, cash: ended.cash, elapsedMs: ended.elapsedMs },
    occurredAt: new Date().toISOString(),
  });
  return { success: ended.status === 'COMPLETED', output: ended.result ?? '', subagent: ended };
};

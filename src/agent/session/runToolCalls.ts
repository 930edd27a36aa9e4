import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import type { BhrainToolEffect } from '../tool/defineTool.js';
import { toolOfBox } from '../tool/executeTool.js';
import { executeToolCall, type ToolCallOutcome, type ToolCallSession } from './executeToolCall.js';

/** .what = runs each item, at most limit at a time, and resolves when all are done */
const runBounded = async <T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> => {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
};

/** .what = the phase of a turn a call runs in, from its tool's effect: 1 = may change anything, 2 = write, 3 = read */
const phaseOf = (effect: BhrainToolEffect | null): 1 | 2 | 3 => (effect === 'write' ? 2 : effect === 'read' ? 3 : 1);

/**
 * .what = runs the tool calls of one turn in a fixed order, at most maxConcurrent at once, and returns their results in the
 *         model's order, each call's phase read from its tool's effect:
 *         1. every call whose effect is unknown, exec, network or delegate (bash, MCP tools, task, a tool not found),
 *            concurrently;
 *         2. then every write (write, edit, a custom tool declared 'write'), one at a time, in the order the model gave
 *            them, each checked for permission right before it runs;
 *         3. then every read (read, glob, grep, websearch), concurrently: they see the workspace as the turn left it.
 *         Once a call ends the session (a BhrainToolFatalError), the calls not yet started are answered without running.
 * .why = a link made by bash in the same turn (`ln -s ../outside d`, `ln ../outside/t hl`) exists before any write is
 *        checked, wherever bash was listed, so the check and the write see the same links; one write at a time means two
 *        edits of one file apply in the model's order; and the cap bounds the processes and output buffered at once
 */
export const runToolCalls = async (
  input: {
    calls: readonly BrainToolCall[];
    /** per call, in the same order, a note appended to its result (the runaway notice), or null */
    notices?: ReadonlyArray<string | null>;
    maxConcurrent: number;
  },
  session: ToolCallSession,
): Promise<ToolCallOutcome[]> => {
  const results = new Map<BrainToolCall, ToolCallOutcome>();
  const noticeOf = new Map(input.calls.map((call, index) => [call, input.notices?.[index] ?? null]));
  // the name of the call that ended the session, once one did
  let endedBy: string | null = null;
  const answer = async (call: BrainToolCall) => {
    const notRun = endedBy === null ? null : `${call.name} was not run: ${endedBy} ended the session before this call's turn came.`;
    const outcome = await executeToolCall(call, session, noticeOf.get(call) ?? null, notRun);
    if (outcome.fatal) endedBy ??= call.name;
    results.set(call, outcome);
  };
  const effectOf = (call: BrainToolCall): BhrainToolEffect | null => {
    const box = session.registry.find(call.name);
    return box ? toolOfBox(box, call.name).effect : null;
  };
  const phases = new Map(input.calls.map((call) => [call, phaseOf(effectOf(call))]));
  const inPhase = (phase: number) => input.calls.filter((call) => phases.get(call) === phase);
  await runBounded(inPhase(1), input.maxConcurrent, answer);
  await runBounded(inPhase(2), 1, answer);
  await runBounded(inPhase(3), input.maxConcurrent, answer);
  return input.calls.map((call) => results.get(call)!);
};

import type { BrainToolCall } from '../../core/contract/BrainMessage.js';
import { WRITING_TOOLS } from '../permission/findOutsideWorkspace.js';
import { executeToolCall, type ToolCallOutcome, type ToolCallSession } from './executeToolCall.js';

/** tools known to change nothing: they run last, so they see every change the turn made */
const READING_TOOLS: ReadonlySet<string> = new Set(['read', 'glob', 'grep']);

/** .what = runs each item, at most limit at a time, and resolves when all are done */
const runBounded = async <T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> => {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
};

/**
 * .what = runs the tool calls of one turn in a fixed order, at most maxConcurrent at once, and returns their results in the
 *         model's order:
 *         1. every call that may change the file system in any way (bash, websearch, any tool not named below), concurrently;
 *         2. then write and edit, one at a time, in the order the model gave them, each checked for permission right before
 *            it runs;
 *         3. then read, glob and grep, concurrently: they see the workspace as the turn left it.
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
  const answer = async (call: BrainToolCall) => void results.set(call, await executeToolCall(call, session, noticeOf.get(call) ?? null));
  const phaseOf = (call: BrainToolCall) => (WRITING_TOOLS.has(call.name) ? 2 : READING_TOOLS.has(call.name) ? 3 : 1);
  const inPhase = (phase: number) => input.calls.filter((call) => phaseOf(call) === phase);
  await runBounded(inPhase(1), input.maxConcurrent, answer);
  await runBounded(inPhase(2), 1, answer);
  await runBounded(inPhase(3), input.maxConcurrent, answer);
  return input.calls.map((call) => results.get(call)!);
};

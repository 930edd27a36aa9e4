import type { BhrainEvent } from '../../agent/events.js';
import type { BrainCash } from '../../core/contract/BrainOutput.js';

/** .what = a cost as the JSON result's metrics say it: its total in USD, null when a request's price was unknown */
const costOf = (cash: BrainCash | null): { usd: number | null } => ({ usd: cash?.total ?? null });

/** .what = a session event as stream-json writes it: the event, with the result's names beside the ones they replace */
export type StreamJsonEvent = BhrainEvent & { tool?: string; cost?: { usd: number | null } };

/**
 * .what = a session event as `--output stream-json` writes it: what it spent and the tool it names in the result
 *         object's words (`tokens` { input, output, cache: { get, set }, reasoning? }, `cost` { usd }, `tool`), beside
 *         the names they replace: IterationCompleted's tokenUsage and generation.costUsd, SessionCompleted's cash,
 *         SubagentCompleted's metrics.cash, and toolName (tool calls and hooks)
 * .why = one thing has one name in every line a consumer reads; the replaced names stay for this schema version,
 *        deprecated, and go in the next (docs/cli-reference.md#json-output). cash's per-part breakdown (deets) goes with
 *        them: the result never had it, and cost.usd is its total
 */
export const asStreamJsonEvent = (event: BhrainEvent): StreamJsonEvent => {
  switch (event.type) {
    case 'IterationCompleted':
      return { ...event, cost: { usd: event.generation.costUsd } };
    case 'SessionCompleted':
      return { ...event, cost: costOf(event.cash) };
    case 'SubagentCompleted': {
      const metrics = { ...event.metrics, cost: costOf(event.metrics.cash) };
      return { ...event, metrics };
    }
    case 'ToolCallStarted':
    case 'ToolExecutionCompleted':
      return { ...event, tool: event.toolName };
    case 'HookStarted':
    case 'HookCompleted':
      return event.toolName === undefined ? event : { ...event, tool: event.toolName };
    default:
      return event;
  }
};

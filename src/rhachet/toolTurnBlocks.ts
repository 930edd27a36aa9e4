import type { BrainEpisode } from '../core/contract/BrainEpisode.js';
import type { BrainMessage, BrainToolCall } from '../core/contract/BrainMessage.js';
import type { PlugTools } from './genPlugTools.js';
import type { RhachetPlugToolExecution } from './RhachetBrain.js';

// an exchange with tool calls or results holds them as rhachet-brains-anthropic writes them: a JSON array of Anthropic
// content blocks, so an episode moves between its atoms and ours
type TextBlock = { type: 'text'; text: string };
type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content?: string | TextBlock[]; is_error?: boolean };

/**
 * .what = what the model reads of a tool's execution: the JSON of its output, or of { error: { name, message } }
 * .why = as rhachet-brains-anthropic writes a tool_result's content (an Error's fields are not enumerable, so they are
 *        named)
 */
export const asToolResultContent = (execution: RhachetPlugToolExecution): string => {
  if (execution.signal === 'success') return JSON.stringify(execution.output) ?? 'null';
  const error = (execution.output as { error?: { name?: string; message?: string } } | undefined)?.error;
  return JSON.stringify({ error: { name: error?.name ?? 'Error', message: error?.message ?? String(error) } });
};

/** .what = an answer that calls tools as an exchange's output: its text and tool_use blocks, each named by the tool's slug */
export const asToolUseText = (input: { text: string; calls: ReadonlyArray<{ exid: string; slug: string; input: unknown }> }): string =>
  JSON.stringify([
    ...(input.text ? [{ type: 'text', text: input.text }] : []),
    ...input.calls.map((call) => ({ type: 'tool_use', id: call.exid, name: call.slug, input: call.input })),
  ]);

/** .what = tool executions as an exchange's input: one tool_result block each */
export const asToolResultText = (executions: readonly RhachetPlugToolExecution[]): string =>
  JSON.stringify(
    executions.map((execution) => ({
      type: 'tool_result',
      tool_use_id: execution.exid,
      content: asToolResultContent(execution),
      is_error: execution.signal !== 'success',
    })),
  );

/** a block's fields, whatever the JSON held */
const fieldsOf = (block: unknown): Record<string, unknown> =>
  block && typeof block === 'object' ? (block as Record<string, unknown>) : {};
const isText = (block: unknown): block is TextBlock => fieldsOf(block).type === 'text' && typeof fieldsOf(block).text === 'string';
const isToolUse = (block: unknown): block is ToolUseBlock => {
  const { type, id, name, input } = fieldsOf(block);
  return (
    type === 'tool_use' &&
    typeof id === 'string' &&
    typeof name === 'string' &&
    !!input &&
    typeof input === 'object' &&
    !Array.isArray(input)
  );
};
const isToolResult = (block: unknown): block is ToolResultBlock => {
  const { type, tool_use_id, content } = fieldsOf(block);
  return (
    type === 'tool_result' &&
    typeof tool_use_id === 'string' &&
    (content === undefined || typeof content === 'string' || (Array.isArray(content) && content.every(isText)))
  );
};

/** .what = the blocks a text holds, when it is a JSON array of known blocks only; null for any other text */
const readBlocks = <T>(text: string, known: (block: unknown) => block is T): T[] | null => {
  if (!text.startsWith('[')) return null;
  try {
    const json = JSON.parse(text);
    return Array.isArray(json) && json.length && json.every(known) ? json : null;
  } catch {
    return null;
  }
};

/**
 * .what = an episode's exchanges as messages, with tool turns decoded: an output of text and tool_use blocks becomes an
 *         assistant message with tool calls, an input of tool_result (and text) blocks becomes tool (and user) messages
 * .why = a continuation after tool calls sends the calls and their results in the supplier's native shape; every other
 *        text stays text, and a slug in a tool_use is offered under the name the model saw (plugs.nameOf)
 */
export const asPriorToolTurns = (episode: BrainEpisode | null, plugs: Pick<PlugTools, 'nameOf'>): BrainMessage[] => {
  const nameById = new Map<string, string>();
  return (episode?.exchanges ?? []).flatMap((exchange): BrainMessage[] => {
    const given = readBlocks(exchange.input, (block): block is TextBlock | ToolResultBlock => isText(block) || isToolResult(block));
    const answer = readBlocks(exchange.output, (block): block is TextBlock | ToolUseBlock => isText(block) || isToolUse(block));
    const asked: BrainMessage[] = given
      ? [
          ...given.filter(isToolResult).map((block): BrainMessage => ({
            role: 'tool',
            toolCallId: block.tool_use_id,
            toolName: nameById.get(block.tool_use_id) ?? 'tool',
            content: typeof block.content === 'string' ? block.content : (block.content ?? []).map((part) => part.text).join('\n'),
            isError: !!block.is_error,
          })),
          ...given.filter(isText).map((block): BrainMessage => ({ role: 'user', content: block.text })),
        ]
      : [{ role: 'user', content: exchange.input }];
    const toolCalls = (answer ?? [])
      .filter(isToolUse)
      .map((block): BrainToolCall => ({ id: block.id, name: plugs.nameOf(block.name), input: block.input }));
    for (const call of toolCalls) nameById.set(call.id, call.name);
    const said = answer
      ? answer
          .filter(isText)
          .map((block) => block.text)
          .join('\n')
      : exchange.output;
    return [...asked, { role: 'assistant', content: said, toolCalls }];
  });
};

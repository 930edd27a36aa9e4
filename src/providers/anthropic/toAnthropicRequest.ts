import type Anthropic from '@anthropic-ai/sdk';

import type { BrainThinking } from '../../core/contract/BrainAtom.js';
import type { BrainMessage, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { renderToolDescription } from '../renderToolDescription.js';

type ContentBlock = Anthropic.ContentBlockParam;
type Turn = { role: 'user' | 'assistant'; content: ContentBlock[] };

const CACHE = { type: 'ephemeral' } as const;

/** .what = folds normalized messages into alternating anthropic turns; tool results join the next user turn */
const toTurns = (messages: readonly BrainMessage[]): Turn[] => {
  const turns: Turn[] = [];
  const push = (role: Turn['role'], block: ContentBlock) => {
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(block);
    else turns.push({ role, content: [block] });
  };
  for (const message of messages) {
    if (message.role === 'user') push('user', { type: 'text', text: message.content || '(empty)' });
    if (message.role === 'tool')
      push('user', {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content || '(no output)',
        is_error: message.isError,
      });
    if (message.role === 'assistant') {
      // signed thinking blocks go back first and unchanged: the api checks their signatures and refuses a tool-use
      // turn sent without them while thinking is on
      for (const block of message.reasoning?.blocks ?? []) push('assistant', { ...block });
      // the api refuses empty text blocks, so an empty answer without calls is kept as a marker
      if (message.content || !message.toolCalls.length) push('assistant', { type: 'text', text: message.content || '(empty response)' });
      for (const call of message.toolCalls) push('assistant', { type: 'tool_use', id: call.id, name: call.name, input: call.input });
    }
  }
  return turns;
};

/** .what = the same block with a cache breakpoint, without touching the original */
const withBreakpoint = (block: ContentBlock): ContentBlock => ({ ...block, cache_control: CACHE }) as ContentBlock;

/**
 * .what = builds a streaming Messages API request from normalized input, with prompt-cache breakpoints
 * .why = breakpoints on the system prompt (covers tools) and on the last two user turns mean each loop
 *        iteration reads everything up to the previous request's end from cache and writes only what is new
 */
export const toAnthropicRequest = (input: {
  model: string;
  maxTokens: number;
  system?: string;
  messages: readonly BrainMessage[];
  tools?: readonly BrainToolDefinition[];
  /** extended thinking; its budget counts within maxTokens, so the caller gives maxTokens above it */
  thinking?: BrainThinking;
}): Anthropic.MessageCreateParamsStreaming => {
  const system = [input.system, ...input.messages.filter((message) => message.role === 'system').map((m) => m.content)]
    .filter((text): text is string => !!text)
    .join('\n\n');
  const turns = toTurns(input.messages);
  // a paused turn (pause_turn) is continued by sending its assistant content back last; the api refuses a final
  // assistant text that ends in whitespace
  const lastTurn = turns[turns.length - 1];
  const lastBlock = lastTurn?.role === 'assistant' ? lastTurn.content[lastTurn.content.length - 1] : undefined;
  if (lastBlock?.type === 'text')
    lastTurn.content[lastTurn.content.length - 1] = { ...lastBlock, text: lastBlock.text.trimEnd() || '(paused)' };
  const userTurnIndexes = turns.flatMap((turn, index) => (turn.role === 'user' ? [index] : []));
  for (const index of userTurnIndexes.slice(-2)) {
    const turn = turns[index];
    turn.content = [...turn.content.slice(0, -1), withBreakpoint(turn.content[turn.content.length - 1])];
  }
  const tools: Anthropic.Tool[] = (input.tools ?? []).map((tool) => ({
    name: tool.name,
    description: renderToolDescription(tool),
    input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
    // sent only when the definition says, so a tool without it asks nothing new of the API
    ...(tool.strict === undefined ? {} : { strict: tool.strict }),
  }));
  if (!system && tools.length) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: CACHE };
  return {
    model: input.model,
    max_tokens: input.maxTokens,
    stream: true,
    ...(input.thinking && input.thinking !== 'off' ? { thinking: { type: 'enabled', budget_tokens: input.thinking.budgetTokens } } : {}),
    ...(system ? { system: [{ type: 'text', text: system, cache_control: CACHE }] } : {}),
    ...(tools.length ? { tools } : {}),
    messages: turns,
  };
};

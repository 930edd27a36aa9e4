import type Anthropic from '@anthropic-ai/sdk';

import type { BrainReasoningBlock } from '../../core/contract/BrainMessage.js';
import type { BrainTokens } from '../../core/contract/BrainOutput.js';

/** .what = what one streamed anthropic message amounts to, before tool arguments are parsed */
export interface AnthropicStreamResult {
  text: string;
  toolUses: Array<{ id: string; name: string; json: string }>;
  /** thinking and redacted_thinking blocks with their signatures, in stream order, as received */
  reasoningBlocks: BrainReasoningBlock[];
  stopReason: string | null;
  tokens: BrainTokens;
}

/**
 * .what = accumulates a raw Messages stream into text, tool uses (raw JSON) and usage
 * .why = we parse tool arguments ourselves, so malformed JSON becomes a tool error instead of an SDK exception
 */
export const readAnthropicStream = async (
  stream: AsyncIterable<Anthropic.RawMessageStreamEvent>,
  onTextDelta?: (text: string) => void,
  onReasoningDelta?: (text: string) => void,
): Promise<AnthropicStreamResult> => {
  const blocks: Array<
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; json: string; preset: unknown }
    | { type: 'thinking'; thinking: string; signature: string }
    | { type: 'redacted_thinking'; data: string }
  > = [];
  const tokens: BrainTokens = { input: 0, output: 0, cache: { get: 0, set: 0 } };
  let stopReason: string | null = null;
  let stopped = false;
  for await (const event of stream) {
    if (event.type === 'message_start') {
      const usage = event.message.usage;
      tokens.input = usage.input_tokens ?? 0;
      tokens.output = usage.output_tokens ?? 0;
      tokens.cache.get = usage.cache_read_input_tokens ?? 0;
      tokens.cache.set = usage.cache_creation_input_tokens ?? 0;
    }
    if (event.type === 'content_block_start') {
      const block = event.content_block;
      if (block.type === 'text') blocks[event.index] = { type: 'text', text: block.text };
      if (block.type === 'tool_use')
        blocks[event.index] = { type: 'tool_use', id: block.id, name: block.name, json: '', preset: block.input };
      if (block.type === 'thinking')
        blocks[event.index] = { type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' };
      if (block.type === 'redacted_thinking') blocks[event.index] = { type: 'redacted_thinking', data: block.data };
    }
    if (event.type === 'content_block_delta') {
      const block = blocks[event.index];
      if (event.delta.type === 'text_delta' && block?.type === 'text') {
        block.text += event.delta.text;
        onTextDelta?.(event.delta.text);
      }
      if (event.delta.type === 'input_json_delta' && block?.type === 'tool_use') block.json += event.delta.partial_json;
      if (event.delta.type === 'thinking_delta' && block?.type === 'thinking') {
        block.thinking += event.delta.thinking;
        onReasoningDelta?.(event.delta.thinking);
      }
      if (event.delta.type === 'signature_delta' && block?.type === 'thinking') block.signature += event.delta.signature;
    }
    if (event.type === 'message_delta') {
      stopReason = event.delta.stop_reason ?? stopReason;
      const usage = event.usage;
      tokens.output = usage.output_tokens ?? tokens.output;
      if (usage.input_tokens != null) tokens.input = usage.input_tokens;
      if (usage.cache_read_input_tokens != null) tokens.cache.get = usage.cache_read_input_tokens;
      if (usage.cache_creation_input_tokens != null) tokens.cache.set = usage.cache_creation_input_tokens;
    }
    if (event.type === 'message_stop') stopped = true;
  }
  // a stream that ends without message_stop was cut: the message may be incomplete, so it is a transient failure
  if (!stopped) throw new Error('the response stream ended before message_stop (connection cut mid-message)');
  return {
    text: blocks.flatMap((block) => (block?.type === 'text' ? [block.text] : [])).join(''),
    toolUses: blocks.flatMap((block) =>
      block?.type === 'tool_use'
        ? [{ id: block.id, name: block.name, json: block.json || (block.preset ? JSON.stringify(block.preset) : '') }]
        : [],
    ),
    reasoningBlocks: blocks.flatMap((block): BrainReasoningBlock[] =>
      block?.type === 'thinking'
        ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature }]
        : block?.type === 'redacted_thinking'
          ? [{ type: 'redacted_thinking', data: block.data }]
          : [],
    ),
    stopReason,
    tokens,
  };
};

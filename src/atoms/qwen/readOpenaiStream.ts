import type OpenAI from 'openai';

import type { BrainTokens } from '../../contract/BrainOutput.js';

/** .what = what one streamed chat completion amounts to, before tool arguments are parsed */
export interface OpenaiStreamResult {
  text: string;
  toolCalls: Array<{ id: string; name: string; json: string }>;
  finishReason: string | null;
  tokens: BrainTokens;
}

/**
 * .what = accumulates chat.completion.chunk deltas into text, tool calls (raw JSON, by index) and usage
 * .note = openai counts cached tokens inside prompt_tokens; they are split out into cache.get here
 */
export const readOpenaiStream = async (
  stream: AsyncIterable<OpenAI.ChatCompletionChunk>,
  onTextDelta?: (text: string) => void,
): Promise<OpenaiStreamResult> => {
  let text = '';
  const calls: Array<{ id: string; name: string; json: string }> = [];
  let finishReason: string | null = null;
  const tokens: BrainTokens = { input: 0, output: 0, cache: { get: 0, set: 0 } };
  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (choice?.delta?.content) {
      text += choice.delta.content;
      onTextDelta?.(choice.delta.content);
    }
    for (const delta of choice?.delta?.tool_calls ?? []) {
      const call = (calls[delta.index] ??= { id: '', name: '', json: '' });
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.name += delta.function.name;
      if (delta.function?.arguments) call.json += delta.function.arguments;
    }
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    if (chunk.usage) {
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      tokens.input = chunk.usage.prompt_tokens - cached;
      tokens.output = chunk.usage.completion_tokens;
      tokens.cache.get = cached;
    }
  }
  // without a finish reason the stream was cut: the message may be incomplete, so it is a transient failure
  if (finishReason === null) throw new Error('the response stream ended without a finish_reason (connection cut mid-message)');
  return {
    text,
    toolCalls: calls.filter(Boolean).map((call, index) => ({ ...call, id: call.id || `call_${index}` })),
    finishReason,
    tokens,
  };
};

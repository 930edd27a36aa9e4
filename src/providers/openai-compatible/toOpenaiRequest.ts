import type OpenAI from 'openai';

import type { BrainMessage, BrainToolDefinition } from '../../core/contract/BrainMessage.js';
import { renderToolDescription } from '../renderToolDescription.js';

/** .what = normalized messages as chat completions messages; tool results stay one message per call */
const toOpenaiMessages = (
  system: string | undefined,
  messages: readonly BrainMessage[],
  systemRole: OpenaiWire['systemRole'],
): OpenAI.ChatCompletionMessageParam[] => [
  ...(system ? [{ role: systemRole, content: system }] : []),
  ...messages.map((message): OpenAI.ChatCompletionMessageParam => {
    if (message.role === 'system') return { role: systemRole, content: message.content };
    if (message.role === 'user') return { role: 'user', content: message.content };
    if (message.role === 'tool')
      // chat completions has no is_error flag, so the failure is said in the content
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        content: message.isError ? `ERROR: ${message.content}` : message.content,
      };
    // the turn's reasoning goes back as reasoning_content: DeepSeek answers 400 without it after a tool call, and
    // Qwen3's template keeps it in context; a server that does not know the field ignores it
    return {
      role: 'assistant',
      content: message.content || null,
      ...(message.reasoning?.text ? { reasoning_content: message.reasoning.text } : {}),
      ...(message.toolCalls.length
        ? {
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: JSON.stringify(call.input) },
            })),
          }
        : {}),
    };
  }),
];

/**
 * .what = how a server's Chat Completions dialect names two things: the output-token bound and the system prompt's role
 * .why = OpenAI's reasoning models refuse max_tokens (they take max_completion_tokens) and take the system prompt as a
 *        developer message; DashScope, vLLM, Ollama and llama.cpp read max_tokens and the system role
 */
export interface OpenaiWire {
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  systemRole: 'system' | 'developer';
}

/** .what = the dialect of the OpenAI-compatible servers (DashScope, vLLM, Ollama, llama.cpp) */
export const COMPATIBLE_WIRE: OpenaiWire = { maxTokensField: 'max_tokens', systemRole: 'system' };

/**
 * .what = builds a streaming Chat Completions request from normalized input
 * .why = include_usage makes the final chunk carry usage (and cached_tokens), which streams otherwise omit
 */
export const toOpenaiRequest = (input: {
  model: string;
  maxTokens: number;
  system?: string;
  messages: readonly BrainMessage[];
  tools?: readonly BrainToolDefinition[];
  /** a model's own fields (set by its middleware, e.g. qwen's enable_thinking), sent as they are after stream_options */
  extraBody?: Record<string, unknown>;
  /** the server's dialect; the compatible servers' when absent */
  wire?: OpenaiWire;
}): OpenAI.ChatCompletionCreateParamsStreaming => ({
  model: input.model,
  [(input.wire ?? COMPATIBLE_WIRE).maxTokensField]: input.maxTokens,
  stream: true,
  stream_options: { include_usage: true },
  ...input.extraBody,
  messages: toOpenaiMessages(input.system, input.messages, (input.wire ?? COMPATIBLE_WIRE).systemRole),
  ...(input.tools?.length
    ? {
        tools: input.tools.map((tool) => ({
          type: 'function' as const,
          function: {
            name: tool.name,
            description: renderToolDescription(tool),
            parameters: tool.inputSchema as Record<string, unknown>,
            ...(tool.strict === undefined ? {} : { strict: tool.strict }),
          },
        })),
      }
    : {}),
});

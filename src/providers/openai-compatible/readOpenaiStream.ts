import type OpenAI from 'openai';

import type { BrainTokens } from '../../core/contract/BrainOutput.js';
import { isWholeJson } from '../isWholeJson.js';

/** .what = what one streamed chat completion amounts to, before tool arguments are parsed */
export interface OpenaiStreamResult {
  text: string;
  toolCalls: Array<{ id: string; name: string; json: string }>;
  /** what the model said when it declined (delta.refusal), '' when it did not */
  refusal: string;
  /** delta.reasoning_content (DashScope, vLLM, DeepSeek) or delta.reasoning (newer vLLM, OpenRouter), '' when none */
  reasoning: string;
  finishReason: string | null;
  tokens: BrainTokens;
}

/** .what = one tool call being assembled, and whether the deltas now arriving at its index replay it */
interface CallSlot {
  call: { id: string; name: string; json: string };
  replay: boolean;
}

/**
 * .what = accumulates chat.completion.chunk deltas into text, refusal, tool calls (raw JSON) and usage
 * .why = OpenAI-compatible servers do not all stream tool calls the same way; the assembly is robust to what they send:
 *        a new id at an index already used starts a new call; a name sent again is not appended (no read_fileread_file);
 *        a finished call replayed under its id (arguments again) is not duplicated
 * .note = openai counts cached tokens inside prompt_tokens; they are split out into cache.get here. Reasoning tokens
 *        (completion_tokens_details.reasoning_tokens) are part of completion_tokens, and said apart as tokens.reasoning
 *        when there are any. A call to a custom (free-text) tool is kept as a call with its text as arguments, so a
 *        call to a tool that was never offered reaches the session and is answered as such, never dropped
 */
export const readOpenaiStream = async (
  stream: AsyncIterable<OpenAI.ChatCompletionChunk>,
  onTextDelta?: (text: string) => void,
  onReasoningDelta?: (text: string) => void,
): Promise<OpenaiStreamResult> => {
  let text = '';
  let reasoning = '';
  let refusal = '';
  const calls: Array<CallSlot['call']> = [];
  // the call each index routes to now, and every call by id (a replay may come at any index)
  const slots = new Map<number, CallSlot>();
  const byId = new Map<string, CallSlot['call']>();
  let finishReason: string | null = null;
  const tokens: BrainTokens = { input: 0, output: 0, cache: { get: 0, set: 0 } };
  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (choice?.delta?.content) {
      text += choice.delta.content;
      onTextDelta?.(choice.delta.content);
    }
    // not in the openai types: servers with a reasoning parser send the thinking apart from the content
    const thought = choice?.delta as { reasoning_content?: string | null; reasoning?: string | null } | undefined;
    const reasoned = thought?.reasoning_content || thought?.reasoning;
    if (typeof reasoned === 'string' && reasoned) {
      reasoning += reasoned;
      onReasoningDelta?.(reasoned);
    }
    const refused = (choice?.delta as { refusal?: string | null } | undefined)?.refusal;
    if (refused) refusal += refused;
    for (const delta of choice?.delta?.tool_calls ?? []) {
      const id = delta.id || '';
      const known = id ? byId.get(id) : undefined;
      let slot = slots.get(delta.index);
      if (known) {
        // the same id again: a continuation, or (when the call is already whole) a replay whose deltas are dropped
        const replay = isWholeJson(known.json);
        if (slot?.call !== known || slot.replay !== replay) slots.set(delta.index, (slot = { call: known, replay }));
      } else if (!slot || (id && slot.call.id && slot.call.id !== id)) {
        // a first delta, or a new id at a reused index: a new call
        slot = { call: { id: '', name: '', json: '' }, replay: false };
        calls.push(slot.call);
        slots.set(delta.index, slot);
      }
      if (slot.replay) continue;
      const call = slot.call;
      if (id && !call.id) {
        call.id = id;
        byId.set(id, call);
      }
      // not in every server's types: a custom tool's call streams custom.name and custom.input instead of function
      const custom = (delta as { custom?: { name?: string; input?: string } }).custom;
      const name = delta.function?.name ?? custom?.name;
      // a name is sent whole by most servers and in fragments by a few: appended only when it is not a resend
      if (name && name !== call.name) call.name = call.name && !name.startsWith(call.name) ? call.name + name : name;
      if (delta.function?.arguments) call.json += delta.function.arguments;
      else if (custom?.input) call.json += custom.input;
    }
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    if (chunk.usage) {
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      tokens.input = chunk.usage.prompt_tokens - cached;
      tokens.output = chunk.usage.completion_tokens;
      tokens.cache.get = cached;
      const reasoningTokens = chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0;
      if (reasoningTokens > 0) tokens.reasoning = reasoningTokens;
      else delete tokens.reasoning;
    }
  }
  // without a finish reason the stream was cut: the message may be incomplete, so it is a transient failure
  if (finishReason === null) throw new Error('the response stream ended without a finish_reason (connection cut mid-message)');
  return {
    text,
    toolCalls: calls.filter((call) => call.name || call.json).map((call, index) => ({ ...call, id: call.id || `call_${index}` })),
    refusal,
    reasoning,
    finishReason,
    tokens,
  };
};

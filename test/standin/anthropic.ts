// Anthropic Messages API wire format: messages, SSE streams and error bodies, as the real API sends them.
import { chunks, middleOf, parseArguments, randomId, type Answer, type StreamPlan } from './answer.js';

/** Usage numbers for one Anthropic response; input excludes cache reads and writes. */
export interface AnthropicUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h: number;
}

/** The error `type` the real API uses for an HTTP status. */
export const anthropicErrorType = (status: number): string => {
  const known: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return known[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
};

/** An error body: `{type:"error", error:{type, message}, request_id}`. */
export const anthropicErrorBody = (status: number, message: string, requestId: string) => ({
  type: 'error',
  error: { type: anthropicErrorType(status), message },
  request_id: requestId,
});

/** The real context-overflow message ("prompt is too long: N tokens > M maximum"). */
export const anthropicOverflowMessage = (tokens: number, limit: number): string =>
  `prompt is too long: ${tokens} tokens > ${limit} maximum`;

/** The usage object of a message (also what message_start carries, with output_tokens 1). */
const usageJson = (usage: AnthropicUsage, outputTokens: number) => ({
  input_tokens: usage.input,
  cache_creation_input_tokens: usage.cacheWrite,
  cache_read_input_tokens: usage.cacheRead,
  cache_creation: { ephemeral_5m_input_tokens: usage.cacheWrite - usage.cacheWrite1h, ephemeral_1h_input_tokens: usage.cacheWrite1h },
  output_tokens: outputTokens,
  service_tier: 'standard',
});

const stopReason = (answer: Answer) => (answer.refusal !== undefined ? 'refusal' : answer.toolCalls.length > 0 ? 'tool_use' : 'end_turn');

/** Content blocks of an answer: a text block (when there is text, or nothing else) then tool_use blocks. */
const contentBlocks = (answer: Answer) => [
  ...(answer.text !== undefined || answer.toolCalls.length === 0 ? [{ type: 'text', text: answer.text ?? answer.refusal ?? '' }] : []),
  ...answer.toolCalls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: parseArguments(call.arguments) })),
];

/** A non-streaming Message (malformed scripted tool arguments are sent as a string `input`). */
export const anthropicMessage = (answer: Answer, model: string, usage: AnthropicUsage) => ({
  id: randomId('msg_01'),
  type: 'message',
  role: 'assistant',
  model,
  content: contentBlocks(answer),
  stop_reason: stopReason(answer),
  stop_sequence: null,
  usage: usageJson(usage, answer.outputTokens),
});

/** One SSE frame: `event: <type>` and `data: <json>`. */
const frame = (payload: { type: string; [field: string]: unknown }): string =>
  `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;

/** The SSE frames of a streamed answer; with `cut`, cutAfter marks the middle delta of the last block. */
export const anthropicStream = (answer: Answer, model: string, usage: AnthropicUsage, cut = false): StreamPlan => {
  const frames: string[] = [];
  const message = { ...anthropicMessage(answer, model, usage), content: [], stop_reason: null, usage: usageJson(usage, 1) };
  frames.push(frame({ type: 'message_start', message }));
  let lastBlockDeltas: number[] = [];
  const blocks = contentBlocks(answer);
  blocks.forEach((block, index) => {
    lastBlockDeltas = [];
    if (block.type === 'text') {
      frames.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      if (index === 0) frames.push(frame({ type: 'ping' }));
      for (const text of chunks(answer.text ?? answer.refusal ?? '')) {
        lastBlockDeltas.push(frames.length);
        frames.push(frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }));
      }
    } else {
      const call = answer.toolCalls[index - (blocks.length - answer.toolCalls.length)];
      frames.push(
        frame({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }),
      );
      if (index === 0) frames.push(frame({ type: 'ping' }));
      // the real API opens every tool_use with an empty partial_json
      for (const partial_json of ['', ...chunks(call.arguments)]) {
        if (partial_json !== '') lastBlockDeltas.push(frames.length);
        frames.push(frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }));
      }
    }
    frames.push(frame({ type: 'content_block_stop', index }));
  });
  frames.push(
    frame({
      type: 'message_delta',
      delta: { stop_reason: stopReason(answer), stop_sequence: null },
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: usage.cacheWrite,
        cache_read_input_tokens: usage.cacheRead,
        output_tokens: answer.outputTokens,
      },
    }),
  );
  frames.push(frame({ type: 'message_stop' }));
  return { frames, cutAfter: cut ? (middleOf(lastBlockDeltas) ?? 0) : undefined };
};

/** A 200 stream that is not valid for the protocol: an event whose data is not JSON. */
export const anthropicInvalidStream = (): StreamPlan => ({ frames: ['event: message_start\ndata: not json{\n\n'] });

/** The count_tokens response. */
export const anthropicTokenCount = (inputTokens: number) => ({ input_tokens: inputTokens });

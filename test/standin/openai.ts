// OpenAI Chat Completions wire format: completions, chunk streams and error bodies, as the real API sends them.
import { chunks, middleOf, randomId, type Answer, type StreamPlan } from './answer.js';

/** Usage numbers for one OpenAI response; prompt includes cached (OpenAI's convention). */
export interface OpenAIUsage {
  prompt: number;
  cached: number;
  /** includes the reasoning tokens (OpenAI's convention) */
  completion: number;
  reasoning: number;
}

/** Whether a model id is one of OpenAI's reasoning models (o-series, gpt-5 but its -chat variants), as the API treats them. */
export const isOpenaiReasoningModel = (model: string): boolean => /^(o\d|gpt-5)/.test(model) && !/-chat/.test(model);

/** Whether a model id is one of OpenAI's own (the ones the API's parameter rules apply to); other ids are a compatible server's. */
const isOpenaiModel = (model: string): boolean => /^(gpt-|o\d|chatgpt-)/.test(model) && model !== 'gpt-standin-1';

const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high'];

/**
 * The 400 the real API answers a request its model does not take, or null when the request is fine: a reasoning model
 * refuses max_tokens (it takes max_completion_tokens), a model that does not reason refuses reasoning_effort, and an
 * effort outside the known values is invalid. Messages and codes as OpenAI sends them.
 */
export const openaiRejection = (body: any): { error: { message: string; type: string; param: string; code: string } } | null => {
  const model = String(body?.model ?? '');
  if (!isOpenaiModel(model)) return null;
  const reject = (param: string, message: string, code = 'unsupported_parameter') => ({
    error: { message, type: 'invalid_request_error', param, code },
  });
  if (isOpenaiReasoningModel(model) && body?.max_tokens !== undefined)
    return reject(
      'max_tokens',
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    );
  if (body?.reasoning_effort !== undefined && !isOpenaiReasoningModel(model))
    return reject('reasoning_effort', "Unsupported parameter: 'reasoning_effort' is not supported with this model.");
  if (body?.reasoning_effort !== undefined && !REASONING_EFFORTS.includes(body.reasoning_effort))
    return reject(
      'reasoning_effort',
      `Invalid value: '${body.reasoning_effort}'. Supported values are: 'none', 'minimal', 'low', 'medium', and 'high'.`,
      'invalid_value',
    );
  return null;
};

/** An error body: `{error:{message, type, param, code}}`, typed and coded by status like the real API. */
export const openaiErrorBody = (status: number, message: string, code?: string | null, param: string | null = null) => {
  const byStatus: Record<number, [string, string | null]> = {
    401: ['invalid_request_error', 'invalid_api_key'],
    403: ['invalid_request_error', 'unsupported_country_region_territory'],
    404: ['invalid_request_error', 'model_not_found'],
    429: ['requests', 'rate_limit_exceeded'],
  };
  const [type, defaultCode] = byStatus[status] ?? [status >= 500 ? 'server_error' : 'invalid_request_error', null];
  return { error: { message, type, param, code: code === undefined ? defaultCode : code } };
};

/** The real context-overflow message (code context_length_exceeded). */
export const openaiOverflowMessage = (tokens: number, limit: number): string =>
  `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens.`;

const usageJson = (usage: OpenAIUsage) => ({
  prompt_tokens: usage.prompt,
  completion_tokens: usage.completion,
  total_tokens: usage.prompt + usage.completion,
  prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: usage.reasoning,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
});

const finishReason = (answer: Answer) => (answer.toolCalls.length > 0 ? 'tool_calls' : 'stop');

const created = () => Math.floor(Date.now() / 1000);

/** A non-streaming chat.completion (content is null when the answer is only tool calls). */
export const openaiCompletion = (answer: Answer, model: string, usage: OpenAIUsage) => ({
  id: randomId('chatcmpl-', 29),
  object: 'chat.completion',
  created: created(),
  model,
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: answer.refusal !== undefined ? null : (answer.text ?? (answer.toolCalls.length > 0 ? null : '')),
        refusal: answer.refusal ?? null,
        annotations: [],
        ...(answer.toolCalls.length > 0
          ? {
              tool_calls: answer.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
            }
          : {}),
      },
      logprobs: null,
      finish_reason: finishReason(answer),
    },
  ],
  usage: usageJson(usage),
  service_tier: 'default',
  system_fingerprint: null,
});

/** One SSE frame: `data: <json>`. */
const frame = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

/** The chunk frames of a streamed answer (usage chunk when `includeUsage`, then [DONE]); with `cut`, cutAfter marks the middle delta. */
export const openaiStream = (answer: Answer, model: string, usage: OpenAIUsage, includeUsage: boolean, cut = false): StreamPlan => {
  const base = {
    id: randomId('chatcmpl-', 29),
    object: 'chat.completion.chunk',
    created: created(),
    model,
    service_tier: 'default',
    system_fingerprint: null,
  };
  const chunk = (delta: object, finish: string | null = null) =>
    frame({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) });
  // a refusal streams as delta.refusal after a first delta whose content is null (as the real API does)
  const frames: string[] = [
    chunk({ role: 'assistant', content: answer.refusal !== undefined ? null : '', refusal: answer.refusal !== undefined ? '' : null }),
  ];
  let deltas: number[] = [];
  for (const refusal of chunks(answer.refusal ?? '')) {
    deltas.push(frames.length);
    frames.push(chunk({ refusal }));
  }
  for (const content of chunks(answer.text ?? '')) {
    deltas.push(frames.length);
    frames.push(chunk({ content }));
  }
  answer.toolCalls.forEach((call, index) => {
    deltas = [];
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const args of chunks(call.arguments)) {
      deltas.push(frames.length);
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
    }
  });
  frames.push(chunk({}, finishReason(answer)));
  if (includeUsage) frames.push(frame({ ...base, choices: [], usage: usageJson(usage) }));
  frames.push('data: [DONE]\n\n');
  return { frames, cutAfter: cut ? (middleOf(deltas) ?? 0) : undefined };
};

/** A 200 stream that is not valid for the protocol: a data line that is not JSON. */
export const openaiInvalidStream = (): StreamPlan => ({ frames: ['data: not json{\n\n', 'data: [DONE]\n\n'] });

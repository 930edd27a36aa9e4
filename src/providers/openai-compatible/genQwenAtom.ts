import type OpenAI from 'openai';

import type { BrainAtom, BrainThinking } from '../../core/contract/BrainAtom.js';
import { DEFAULT_QWEN_BASE_URL } from '../constants.js';
import type { AtomCall, AtomRawGeneration } from '../genAtom.js';
import { genAtom } from '../genAtom.js';
import { genClientCache } from '../genClientCache.js';
import { nodeHttpFetch } from '../nodeHttpFetch.js';
import { withIdleTimeout } from '../withIdleTimeout.js';
import type { BrainModelEntry } from '../models.js';
import { readOpenaiStream } from './readOpenaiStream.js';
import { recoverToolCallText } from '../middleware/recoverToolCallText.js';
import { genThinkFilter, splitThinkText } from '../middleware/splitThinkText.js';
import { toOpenaiRequest } from './toOpenaiRequest.js';

// retries are ours (bounded, see withRetry), so the SDK's own are off; we log ourselves
// the openai SDK sends every credential as a bearer token
const getClient = genClientCache<OpenAI>(async ({ auth, baseURL }) => {
  const { default: OpenAIClient } = await import('openai');
  return new OpenAIClient({ apiKey: auth.value, baseURL, maxRetries: 0, logLevel: 'off', fetch: nodeHttpFetch });
});

/**
 * .what = the last call of a response cut by the output-token limit, when its arguments are not whole JSON
 * .why = only the last call can be cut (calls stream in order); running it half-parsed would write half a file
 */
const cutToolCall = <T extends { json: string }>(calls: readonly T[]): T | null => {
  const last = calls[calls.length - 1];
  if (!last) return null;
  try {
    JSON.parse(last.json);
    return null;
  } catch {
    return last;
  }
};

/** .what = one streamed Chat Completions call, normalized, with <tool_call> text recovered into calls */
const callOpenai =
  (model: string): AtomCall =>
  async ({ auth, baseURL, request, maxOutputTokens, timeoutMs, idleMs, signal }) => {
    const stream = await (
      await getClient({ auth, baseURL })
    ).chat.completions.create(toOpenaiRequest({ model, maxTokens: maxOutputTokens, ...request }), { timeout: timeoutMs, signal });
    // a <think> block in the content (a server without a reasoning parser) streams as reasoning, not as answer text
    const filter = genThinkFilter({ onText: request.onTextDelta, onReasoning: request.onReasoningDelta });
    const streamed = await readOpenaiStream(
      withIdleTimeout({ stream, idleMs, abort: () => stream.controller.abort() }),
      request.onTextDelta || request.onReasoningDelta ? filter.push : undefined,
      request.onReasoningDelta,
    );
    filter.end();
    const think = splitThinkText(streamed.text);
    const reasoningText = [streamed.reasoning, think.reasoning].filter((part) => part.trim()).join('\n\n');
    const reasoning = reasoningText ? { reasoning: { text: reasoningText } } : {};
    const result = { ...streamed, text: think.text };
    // a refusal (delta.refusal, or content_filter) is the answer: its text shown, its calls never run
    if (result.refusal || result.finishReason === 'content_filter')
      return { text: result.refusal || result.text, toolCalls: [], stopReason: 'refusal', ...reasoning, tokens: result.tokens };
    // the output-token limit cut the last call mid-arguments: it is reported, never run half-parsed
    const cut = result.finishReason === 'length' ? cutToolCall(result.toolCalls) : null;
    const native: AtomRawGeneration['toolCalls'] = result.toolCalls
      .filter((call) => call !== cut)
      .map((call) => ({ id: call.id, name: call.name, raw: call.json }));
    const recovered = native.length ? { text: result.text, toolCalls: [] } : recoverToolCallText(result.text, request.tools ?? []);
    const toolCalls = [
      ...native,
      ...recovered.toolCalls.map((call, index) => ({ ...call, id: `call_recovered_${Date.now().toString(36)}_${index}` })),
    ];
    // the <tool_call> markup already streamed as text was a call, not the answer: what was shown is replaced by the answer
    if (recovered.toolCalls.length && request.onTextDelta) {
      request.onTextReset?.();
      if (recovered.text) request.onTextDelta(recovered.text);
    }
    return {
      text: recovered.text,
      toolCalls,
      stopReason: toolCalls.length ? 'tool_calls' : result.finishReason === 'length' ? 'max_tokens' : 'end',
      ...(cut ? { truncatedToolCalls: [{ id: cut.id, name: cut.name, receivedChars: cut.json.length }] } : {}),
      ...reasoning,
      tokens: result.tokens,
    };
  };

/**
 * .what = the qwen atom: an OpenAI-compatible Chat Completions endpoint over the openai SDK (DashScope by default)
 * .why = one of bhrain's two suppliers; also serves vLLM, Ollama and llama.cpp servers by baseUrl or QWEN_BASE_URL
 * .note = a key is required for DashScope; a self-hosted server at another url may run without one. The base URL
 *         includes /v1 (the SDK appends /chat/completions); a pasted .../chat/completions is stripped
 */
export const genQwenAtom = (input: {
  slug: string;
  entry: BrainModelEntry;
  baseUrl?: string;
  description?: string;
  thinking?: BrainThinking;
}): BrainAtom =>
  genAtom({
    slug: input.slug,
    description: input.description ?? `Qwen ${input.entry.model} via an OpenAI-compatible Chat Completions endpoint`,
    spec: { ...input.entry },
    baseUrl: input.baseUrl,
    thinking: input.thinking,
    creds: {
      supplier: 'qwen',
      keyEnvVars: ['QWEN_API_KEY', 'DASHSCOPE_API_KEY'],
      urlEnvVar: 'QWEN_BASE_URL',
      defaultUrl: DEFAULT_QWEN_BASE_URL,
      needsKey: (url) => url.includes('dashscope'),
      urlSuffixes: /\/chat\/completions$/,
      callPath: '/chat/completions',
      urlHint: 'an OpenAI-compatible base URL usually ends in /v1 (e.g. http://localhost:8000/v1)',
    },
    call: callOpenai(input.entry.model),
  });

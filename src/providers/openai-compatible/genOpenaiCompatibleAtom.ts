import type OpenAI from 'openai';

import type { BrainAtom, BrainThinking } from '../../core/contract/BrainAtom.js';
import type { AtomCall, AtomCredsSpec, AtomRawGeneration } from '../genAtom.js';
import { genAtom } from '../genAtom.js';
import { genClientCache } from '../genClientCache.js';
import { findCutToolCall } from '../isWholeJson.js';
import { withIdleTimeout } from '../withIdleTimeout.js';
import type { BrainModelEntry } from '../models.js';
import { wrapAtomCall, type AtomMiddleware } from '../middleware/wrapAtomCall.js';
import { readOpenaiStream } from './readOpenaiStream.js';
import { toOpenaiRequest, type OpenaiWire } from './toOpenaiRequest.js';

// retries are ours (bounded, see withRetry), so the SDK's own are off; we log ourselves. The openai SDK sends every
// credential as a bearer token. The fetch is the caller's (context.fetch), else the SDK's own
const getClient = genClientCache<OpenAI>(async ({ auth, baseURL, fetch }) => {
  const { default: OpenAIClient } = await import('openai');
  return new OpenAIClient({ apiKey: auth.value, baseURL, maxRetries: 0, logLevel: 'off', ...(fetch ? { fetch } : {}) });
});

/** .what = one streamed Chat Completions call, normalized: refusals, calls cut by the token limit, usage */
const callOpenaiCompatible =
  (model: string, wire: OpenaiWire | undefined): AtomCall =>
  async ({ auth, baseURL, request, maxOutputTokens, timeoutMs, idleMs, signal, fetch, extraBody }) => {
    const stream = await (
      await getClient({ auth, baseURL, fetch })
    ).chat.completions.create(toOpenaiRequest({ model, maxTokens: maxOutputTokens, ...request, extraBody, wire }), {
      timeout: timeoutMs,
      signal,
    });
    const result = await readOpenaiStream(
      withIdleTimeout({ stream, idleMs, abort: () => stream.controller.abort() }),
      request.onTextDelta,
      request.onReasoningDelta,
    );
    const reasoning = result.reasoning.trim() ? { reasoning: { text: result.reasoning } } : {};
    // a refusal (delta.refusal, or content_filter) is the answer: its text shown, its calls never run
    if (result.refusal || result.finishReason === 'content_filter')
      return { text: result.refusal || result.text, toolCalls: [], stopReason: 'refusal', ...reasoning, tokens: result.tokens };
    // the output-token limit cut the last call mid-arguments: it is reported, never run half-parsed
    const cut = result.finishReason === 'length' ? findCutToolCall(result.toolCalls) : null;
    const toolCalls: AtomRawGeneration['toolCalls'] = result.toolCalls
      .filter((call) => call !== cut)
      .map((call) => ({ id: call.id, name: call.name, raw: call.json }));
    return {
      text: result.text,
      toolCalls,
      stopReason: toolCalls.length ? 'tool_calls' : result.finishReason === 'length' ? 'max_tokens' : 'end',
      ...(cut ? { truncatedToolCalls: [{ id: cut.id, name: cut.name, receivedChars: cut.json.length }] } : {}),
      ...reasoning,
      tokens: result.tokens,
    };
  };

/**
 * .what = an atom over an OpenAI-compatible Chat Completions endpoint (the openai SDK): the model entry says where it is
 *         and whose credentials it takes (creds), and which quirks of its models it reads (middleware)
 * .why = one provider for every server that speaks the protocol (DashScope, vLLM, Ollama, llama.cpp, OpenAI); what one
 *        family of models does its own way is middleware, never a branch here (qwen: src/providers/qwen/genQwenAtom.ts)
 * .note = the base URL includes /v1 (the SDK appends /chat/completions); a pasted .../chat/completions is stripped by
 *         the entry's creds.urlSuffixes. A thinking option reaches the wire only through a middleware that knows the
 *         model's own switch
 */
export const genOpenaiCompatibleAtom = (input: {
  slug: string;
  entry: BrainModelEntry;
  description: string;
  creds: AtomCredsSpec;
  middleware?: readonly AtomMiddleware[];
  baseUrl?: string;
  thinking?: BrainThinking;
  /** the server's dialect (openai's reasoning models: max_completion_tokens, the developer role); the compatible one when absent */
  wire?: OpenaiWire;
}): BrainAtom =>
  genAtom({
    slug: input.slug,
    description: input.description,
    spec: { ...input.entry },
    baseUrl: input.baseUrl,
    thinking: input.thinking,
    creds: input.creds,
    call: wrapAtomCall({ call: callOpenaiCompatible(input.entry.model, input.wire), middleware: input.middleware ?? [] }),
  });

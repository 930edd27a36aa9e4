import type { BrainAtom, BrainThinking } from '../../core/contract/BrainAtom.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { getSupplierFacts } from '../../core/contract/supplierTable.js';
import type { AtomCall, AtomRawGeneration } from '../genAtom.js';
import { genAtom } from '../genAtom.js';
import { genClientCache } from '../genClientCache.js';
import { findCutToolCall } from '../isWholeJson.js';
import { withIdleTimeout } from '../withIdleTimeout.js';
import type { BrainModelEntry } from '../models.js';
import type { AnthropicMessagesClient } from './AnthropicMessagesClient.js';
import { readAnthropicStream } from './readAnthropicStream.js';
import { toAnthropicRequest } from './toAnthropicRequest.js';

// retries are ours (bounded, see withRetry), so the SDK's own are off; we log ourselves. Exactly one credential is
// passed and the other is null, so the SDK never reads a second one from process.env behind our back. The fetch is the
// caller's (context.fetch), else the SDK's own
const getClient = genClientCache<AnthropicMessagesClient>(async ({ auth, baseURL, fetch }) => {
  const { AnthropicMessagesClient: Client } = await import('./AnthropicMessagesClient.js');
  return new Client({
    ...(auth.kind === 'bearer' ? { apiKey: null, authToken: auth.value } : { apiKey: auth.value, authToken: null }),
    baseURL,
    maxRetries: 0,
    logLevel: 'off',
    ...(fetch ? { fetch } : {}),
  });
});

// every stop reason mapped truly; end_turn, stop_sequence (and one we do not know yet) end the answer
const STOP_REASONS: Record<string, AtomRawGeneration['stopReason']> = {
  tool_use: 'tool_calls',
  max_tokens: 'max_tokens',
  // the response filled the context window: cut like max_tokens
  model_context_window_exceeded: 'max_tokens',
  refusal: 'refusal',
  pause_turn: 'pause_turn',
};

/**
 * .what = max_tokens for a request: the answer's share plus the thinking budget, within the model's output limit
 * .why = anthropic counts thinking within max_tokens and refuses a budget that is not below it; a budget the model's
 *        limit cannot hold fails before the request, naming both numbers
 */
const toMaxTokens = (input: { maxOutputTokens: number; modelMaxOutputTokens: number; thinking?: BrainThinking }): number => {
  if (!input.thinking || input.thinking === 'off') return input.maxOutputTokens;
  const maxTokens = Math.min(input.maxOutputTokens + input.thinking.budgetTokens, input.modelMaxOutputTokens);
  if (input.thinking.budgetTokens >= maxTokens)
    throw new BadRequestError(
      `--thinking ${input.thinking.budgetTokens} does not fit: the model writes at most ${input.modelMaxOutputTokens} output tokens, thinking included; give a budget below ${input.modelMaxOutputTokens}`,
    );
  return maxTokens;
};

/** .what = one streamed Messages API call, normalized */
const callAnthropic =
  (model: string, modelMaxOutputTokens: number): AtomCall =>
  async ({ auth, baseURL, request, maxOutputTokens, timeoutMs, idleMs, signal, fetch }) => {
    const stream = await (
      await getClient({ auth, baseURL, fetch })
    ).messages.create(
      toAnthropicRequest({
        model,
        ...request,
        maxTokens: toMaxTokens({ maxOutputTokens, modelMaxOutputTokens, thinking: request.thinking }),
      }),
      { timeout: timeoutMs, signal },
    );
    const result = await readAnthropicStream(
      withIdleTimeout({ stream, idleMs, abort: () => stream.controller.abort() }),
      request.onTextDelta,
      request.onReasoningDelta,
    );
    // thinking blocks are kept whole with their signatures, to be sent back before this turn's tool_use blocks
    const reasoning = result.reasoningBlocks.length
      ? {
          reasoning: {
            text: result.reasoningBlocks.flatMap((block) => (block.type === 'thinking' ? [block.thinking] : [])).join('\n\n'),
            blocks: result.reasoningBlocks,
          },
        }
      : {};
    const stopReason = STOP_REASONS[result.stopReason ?? ''] ?? 'end';
    // a refusal is the answer: its text shown, any call it began never run
    if (stopReason === 'refusal') return { text: result.text, toolCalls: [], stopReason, ...reasoning, tokens: result.tokens };
    // the output-token limit cut the last tool_use mid-input: reported as such, never run half-parsed
    const cut = stopReason === 'max_tokens' ? findCutToolCall(result.toolUses) : null;
    return {
      text: result.text,
      toolCalls: result.toolUses.filter((use) => use !== cut).map((use) => ({ id: use.id, name: use.name, raw: use.json })),
      stopReason,
      ...(cut ? { truncatedToolCalls: [{ id: cut.id, name: cut.name, receivedChars: cut.json.length }] } : {}),
      ...reasoning,
      tokens: result.tokens,
    };
  };

const ANTHROPIC = getSupplierFacts('anthropic');

/**
 * .what = the claude atom: Anthropic's Messages API over @anthropic-ai/sdk, streaming, native tool_use, prompt caching
 * .why = Anthropic's own protocol; creds from context.creds.anthropic or the supplier table's token (bearer, for a
 *        gateway) and key variables, endpoint from baseUrl, context.creds.anthropic.url or the table's URL variable
 * .note = the base URL is the host, without /v1 (the SDK appends /v1/messages); a trailing /v1 is accepted and stripped
 */
export const genClaudeAtom = (input: {
  slug: string;
  entry: BrainModelEntry;
  baseUrl?: string;
  description?: string;
  thinking?: BrainThinking;
}): BrainAtom =>
  genAtom({
    slug: input.slug,
    description: input.description ?? `Anthropic ${input.entry.model} via the Messages API`,
    spec: { ...input.entry },
    baseUrl: input.baseUrl,
    thinking: input.thinking,
    creds: {
      ...ANTHROPIC,
      needsKey: () => true,
      urlSuffixes: /\/v1(\/messages)?$/,
      callPath: '/v1/messages',
      urlHint: `an Anthropic base URL is the part before /v1/messages, without /v1 (e.g. ${ANTHROPIC.defaultUrl}, or http://localhost:4000/anthropic for a gateway)`,
    },
    call: callAnthropic(input.entry.model, input.entry.maxOutputTokens),
  });

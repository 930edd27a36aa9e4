import type Anthropic from '@anthropic-ai/sdk';

import type { BrainAtom } from '../../contract/BrainAtom.js';
import type { AtomCall } from '../genAtom.js';
import { genAtom } from '../genAtom.js';
import { genClientCache } from '../genClientCache.js';
import { withIdleTimeout } from '../withIdleTimeout.js';
import type { BrainModelEntry } from '../models.js';
import { readAnthropicStream } from './readAnthropicStream.js';
import { toAnthropicRequest } from './toAnthropicRequest.js';

// retries are ours (bounded, see withRetry), so the SDK's own are off; we log ourselves
const getClient = genClientCache<Anthropic>(async ({ apiKey, baseURL }) => {
  const { default: AnthropicClient } = await import('@anthropic-ai/sdk');
  return new AnthropicClient({ apiKey, baseURL, maxRetries: 0, logLevel: 'off' });
});

const STOP_REASONS: Record<string, 'end' | 'tool_calls' | 'max_tokens'> = {
  tool_use: 'tool_calls',
  max_tokens: 'max_tokens',
};

/** .what = one streamed Messages API call, normalized */
const callAnthropic =
  (model: string): AtomCall =>
  async ({ apiKey, baseURL, request, maxOutputTokens, timeoutMs, idleMs, signal }) => {
    const stream = await (await getClient(apiKey, baseURL)).messages.create(
      toAnthropicRequest({ model, maxTokens: maxOutputTokens, ...request }),
      { timeout: timeoutMs, signal },
    );
    const result = await readAnthropicStream(
      withIdleTimeout({ stream, idleMs, abort: () => stream.controller.abort() }),
      request.onTextDelta,
    );
    return {
      text: result.text,
      toolCalls: result.toolUses.map((use) => ({ id: use.id, name: use.name, raw: use.json })),
      stopReason: STOP_REASONS[result.stopReason ?? ''] ?? 'end',
      tokens: result.tokens,
    };
  };

/**
 * .what = the claude atom: Anthropic's Messages API over @anthropic-ai/sdk, streaming, native tool_use, prompt caching
 * .why = one of bhrain's two suppliers; creds from context.creds.anthropic or ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL
 */
export const genClaudeAtom = (input: { slug: string; entry: BrainModelEntry }): BrainAtom =>
  genAtom({
    slug: input.slug,
    description: `Anthropic ${input.entry.model} via the Messages API`,
    spec: { ...input.entry },
    creds: {
      supplier: 'anthropic',
      keyEnvVars: ['ANTHROPIC_API_KEY'],
      urlEnvVar: 'ANTHROPIC_BASE_URL',
      defaultUrl: 'https://api.anthropic.com',
      needsKey: () => true,
    },
    call: callAnthropic(input.entry.model),
  });

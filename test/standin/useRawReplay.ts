// vitest fixture: one raw replay server per test file, reset before each test, plus contexts pointing the atoms at it
import { afterAll, beforeAll, beforeEach } from 'vitest';

import type { BrainContext } from '../../src/core/contract/BrainContext.js';
import { startRawReplay, type RawReplay } from './rawReplay.js';

/**
 * .what = starts a raw replay server for the file; `replayer()` returns it, `contextFor()` a context whose creds point
 *         both atoms at it (or at `urls`), with fast retries and an empty env
 * .why = the wire-fidelity suites replay recorded streams through the real SDKs, and each needs the same setup
 */
export const useRawReplay = () => {
  let server: RawReplay;
  beforeAll(async () => {
    server = await startRawReplay();
  });
  afterAll(async () => server.close());
  beforeEach(() => server.reset());
  return {
    replayer: () => server,
    contextFor: (input: { urls?: { anthropic: string; openai: string }; maxRetries?: number } = {}): BrainContext => ({
      creds: {
        anthropic: { apiKey: 'test', url: input.urls?.anthropic ?? server.url },
        qwen: { apiKey: 'test', url: input.urls?.openai ?? server.openaiUrl },
        openai: { apiKey: 'test', url: input.urls?.openai ?? server.openaiUrl },
      },
      retry: { maxRetries: input.maxRetries ?? 2, baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 2_000 },
      env: {},
    }),
  };
};

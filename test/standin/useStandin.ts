// vitest fixture: one stand-in per test file, reset before each test, plus contexts pointing the atoms at it
import { afterAll, beforeAll, beforeEach } from 'vitest';

import type { BhrainContext } from '../../src/agent/BhrainContext.js';
import { startStandin, type Standin, type StandinOptions } from './standin.js';

/** the atom slugs that exercise each wire protocol */
export const PROTOCOL_SLUGS = [
  { protocol: 'anthropic' as const, slug: 'claude/haiku' },
  { protocol: 'openai' as const, slug: 'qwen/qwen-plus' },
];

/** starts a stand-in for the file; `standin()` returns it, `contextFor()` a context that targets it with fast retries */
export const useStandin = (options: StandinOptions = { cacheMinTokens: 0 }) => {
  let standin: Standin;
  beforeAll(async () => {
    standin = await startStandin(options);
  });
  afterAll(async () => standin.close());
  beforeEach(() => standin.reset());
  return {
    standin: () => standin,
    contextFor: (overrides: BhrainContext = {}): BhrainContext => ({
      creds: {
        anthropic: { apiKey: 'test', url: standin.url },
        qwen: { apiKey: 'test', url: standin.openaiUrl },
        openai: { apiKey: 'test', url: standin.openaiUrl },
      },
      retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 2_000 },
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      ...overrides,
    }),
  };
};

/** a log that records every line, for asserting what was logged */
export const genRecordingLog = () => {
  const lines: Array<{ level: string; message: string; meta?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, meta?: Record<string, unknown>) => void lines.push({ level, message, meta });
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
};

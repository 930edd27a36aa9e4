import { describe, expect, it } from 'vitest';

import { genRecordingLog, useStandin } from '#standin/useStandin.js';
import { SupplierRejectedError, SupplierUnavailableError } from '../core/contract/errors.js';
import { withRetry, type SupplierRetry } from './withRetry.js';

const { standin } = useStandin();

/** one Messages API call over real HTTP; a non-2xx answer throws with its status and headers, as the SDKs do */
const callStandin = async (): Promise<unknown> => {
  const response = await fetch(`${standin().url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test' },
    body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  if (!response.ok) throw Object.assign(new Error(await response.text()), { status: response.status, headers: response.headers });
  return response.json();
};

const policy = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 2_000 };
const mapError = (error: unknown) => new SupplierRejectedError(String(error));

describe('withRetry', () => {
  it("events: onRetry is called before each retry's wait, with the attempt to come, the wait (retry-after honoured) and the failure", async () => {
    standin().script({ error: { status: 529, retryAfterMs: 60 } }, { error: { status: 500 } }, { text: 'at last' });
    const retries: Array<SupplierRetry & { at: number }> = [];
    const { value, attempts } = await withRetry({
      run: callStandin,
      policy,
      mapError,
      supplier: 'claude/haiku',
      log: genRecordingLog().log,
      onRetry: (retry) => void retries.push({ ...retry, at: Date.now() }),
    });
    expect(attempts).toBe(3);
    expect(JSON.stringify(value)).toContain('at last');
    expect(retries).toEqual([
      { attempt: 2, delayMs: 60, reason: expect.stringMatching(/^HTTP 529: .*overloaded/i), at: expect.any(Number) },
      { attempt: 3, delayMs: expect.any(Number), reason: expect.stringMatching(/^HTTP 500: /), at: expect.any(Number) },
    ]);
    // reported before the wait, so a stream shows the retry while it waits
    expect(standin().requests[1].at - retries[0].at).toBeGreaterThanOrEqual(55);
  });

  it('events: an onRetry hook that throws is logged, and the retry goes on', async () => {
    standin().script({ error: { status: 503 } }, { text: 'fine' });
    const { lines, log } = genRecordingLog();
    const { attempts } = await withRetry({
      run: callStandin,
      policy,
      mapError,
      supplier: 'claude/haiku',
      log,
      onRetry: () => {
        throw new Error('subscriber bug');
      },
    });
    expect(attempts).toBe(2);
    expect(lines.find((line) => line.level === 'error')?.message).toBe(
      'claude/haiku: the onRetry hook threw: subscriber bug; the retry goes on',
    );
  });

  it('conventions: exhausted retries say what anyone can do, and the library field only in parentheses', async () => {
    standin().script({ error: { status: 500 } }, { error: { status: 500 } });
    const exhausted = withRetry({
      run: callStandin,
      policy: { ...policy, maxRetries: 1 },
      mapError,
      supplier: 'claude/haiku',
      log: genRecordingLog().log,
    });
    await expect(exhausted).rejects.toThrow(SupplierUnavailableError);
    await expect(exhausted).rejects.toThrow(
      /failed 2 times in a row \(last: HTTP 500: .*\); the supplier is unreachable or overloaded\. Try again later \(library: raise context\.retry\.maxRetries\)$/,
    );

    standin().script({ error: { status: 429, retryAfterSeconds: 3_600 } });
    const tooLong = withRetry({ run: callStandin, policy, mapError, supplier: 'claude/haiku', log: genRecordingLog().log });
    await expect(tooLong).rejects.toThrow(
      /asked to retry after 3600\.0 s, beyond the remaining retry budget of 2\.0 s\. Try again in 3600 s or later \(library: raise context\.retry\.maxTotalWaitMs\)$/,
    );
  });
});

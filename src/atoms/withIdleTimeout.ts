/**
 * .what = iterates a stream, failing when no item arrives within the idle limit, and aborting the request behind it
 * .why = an SDK's request timeout covers the wait for headers, not a stream that stalls midway; a stalled stream
 *        must become a (retryable) failure, never a hang
 */
export async function* withIdleTimeout<T>(input: { stream: AsyncIterable<T>; idleMs: number; abort: () => void }): AsyncGenerator<T> {
  const iterator = input.stream[Symbol.asyncIterator]();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        input.abort();
        reject(new Error(`the response stream stalled: no data for ${input.idleMs} ms`));
      }, input.idleMs);
    });
    try {
      const next = await Promise.race([iterator.next(), idle]);
      if (next.done) return;
      yield next.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * .what = iterates a stream, failing when no item arrives within the idle limit, and aborting the request behind it
 * .why = an SDK's request timeout covers the wait for headers, not a stream that stalls midway; a stalled stream
 *        must become a (retryable) failure, never a hang
 */
export async function* withIdleTimeout<T>(input: { stream: AsyncIterable<T>; idleMs: number; abort: () => void }): AsyncGenerator<T> {
  const iterator = input.stream[Symbol.asyncIterator]();
  let open = true; // whether the request behind the stream may still be open
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          open = false;
          input.abort();
          reject(new Error(`the response stream stalled: no data for ${input.idleMs} ms`));
        }, input.idleMs);
      });
      try {
        const next = await Promise.race([iterator.next(), idle]);
        if (next.done) {
          open = false;
          return;
        }
        yield next.value;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    // a reader that stops early (a malformed event, a throwing callback) never resumes the SDK's iterator, so its own
    // cleanup never runs: abort here, or the connection stays open (and keeps a CLI process from exiting)
    if (open) input.abort();
  }
}

/** .what = why a deadline cut what it watched: its time ran out, or the caller's signal aborted */
export type DeadlineCut = 'timeout' | 'abort';

/**
 * .what = calls onCut once, at the first of: timeoutMs passed, the signal aborted (at once if it already has); returns
 *         the function that stops watching (clears the timer, removes the abort listener)
 * .why = every bounded wait of a child (a process group, a sandbox call, a turn of the claude CLI) ends the same two
 *        ways; one watcher keeps the timer and the listener from leaking in any of them
 */
export const watchDeadline = (input: { timeoutMs?: number; signal?: AbortSignal }, onCut: (why: DeadlineCut) => void): (() => void) => {
  let watching = true;
  let timer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    watching = false;
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onAbort);
  };
  const cut = (why: DeadlineCut): void => {
    if (!watching) return;
    stop();
    onCut(why);
  };
  function onAbort(): void {
    cut('abort');
  }
  if (input.signal?.aborted) {
    cut('abort');
    return stop;
  }
  if (input.timeoutMs !== undefined && Number.isFinite(input.timeoutMs)) timer = setTimeout(() => cut('timeout'), input.timeoutMs);
  input.signal?.addEventListener('abort', onAbort, { once: true });
  return stop;
};

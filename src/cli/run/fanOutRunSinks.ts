import type { RunDelta, RunEnd, RunEventOrigin, RunSink, RunStart } from './RunSink.js';
import type { BhrainEvent } from '../../agent/events.js';

/** .what = the run's sinks as one: each call goes to every sink in the order added; `add` takes the next one in */
export interface RunSinks {
  add: (sink: RunSink) => void;
  onStart: (start: RunStart) => void;
  onEvent: (event: BhrainEvent, origin: RunEventOrigin) => void;
  onDelta: (delta: RunDelta) => void;
  onFailure: () => Promise<void>;
  /** the exit code as the last sink to change it left it */
  onEnd: (end: RunEnd) => Promise<number>;
  close: (exitCode: number) => Promise<void>;
}

/**
 * .what = fans a run's stream out to its sinks, in order, as openai-agents-js's MultiTracingProcessor does
 * .why = a fault in one sink is a warning naming it and what it was doing (its first fault only: a sink that fails on
 *        every event says so once); the run and the other sinks go on, and so does that sink
 */
export const fanOutRunSinks = (context: { warn: (message: string) => void }): RunSinks => {
  const sinks: RunSink[] = [];
  const faulted = new Set<RunSink>();
  const report = (sink: RunSink, step: string) => (error: unknown) => {
    if (faulted.has(sink)) return;
    faulted.add(sink);
    context.warn(`the run's ${sink.name} failed on ${step}: ${(error as Error)?.message ?? error}; the run goes on without what it missed`);
  };
  /** .what = one call to every sink that has it, each guarded */
  const each = (step: string, call: (sink: RunSink) => void) => {
    for (const sink of sinks)
      try {
        call(sink);
      } catch (error) {
        report(sink, step)(error);
      }
  };
  return {
    add: (sink) => void sinks.push(sink),
    onStart: (start) => each('start', (sink) => sink.onStart?.(start)),
    onEvent: (event, origin) => each(event.type, (sink) => sink.onEvent?.(event, origin)),
    onDelta: (delta) => each(delta.type, (sink) => sink.onDelta?.(delta)),
    onFailure: async () => {
      await Promise.all(sinks.map(async (sink) => sink.onFailure?.()).map((done, at) => done.catch(report(sinks[at], 'failure'))));
    },
    onEnd: async (end) => {
      let { exitCode } = end;
      for (const sink of sinks) {
        const changed = await (async () => sink.onEnd?.({ ...end, exitCode }))().catch(report(sink, 'end'));
        if (typeof changed === 'number') exitCode = changed;
      }
      return exitCode;
    },
    close: async (exitCode) => {
      await Promise.all(sinks.map(async (sink) => sink.close?.(exitCode)).map((done, at) => done.catch(report(sinks[at], 'close'))));
    },
  };
};

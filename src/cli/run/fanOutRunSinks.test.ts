import { describe, expect, it } from 'vitest';

import type { BhrainEvent } from '../../agent/events.js';
import { fanOutRunSinks } from './fanOutRunSinks.js';
import type { RunEnd, RunSink } from './RunSink.js';

const EVENT: BhrainEvent = {
  type: 'Compacted',
  sessionUuid: 's',
  strategy: 'truncate',
  tokensBefore: 9,
  tokensAfter: 3,
  occurredAt: 'now',
};
const END: RunEnd = {
  exitCode: 0,
  termination: 'complete',
  prompt: 'p',
  answer: 'a',
  error: null,
  metrics: null,
  denials: [],
  audit: null,
};

/** a sink that records every call it gets */
const genRecordingSink = (name: string) => {
  const calls: string[] = [];
  const sink: RunSink = {
    name,
    onEvent: (event, origin) => void calls.push(`${origin} ${event.type}`),
    onFailure: () => void calls.push('failure'),
    onEnd: (end) => void calls.push(`end ${end.exitCode}`),
    close: (exitCode) => void calls.push(`close ${exitCode}`),
  };
  return { sink, calls };
};

describe('fanOutRunSinks', () => {
  it('a sink that throws at every step is one warning naming it; the sinks before and after it get every call, and the exit code stands', async () => {
    const warnings: string[] = [];
    const sinks = fanOutRunSinks({ warn: (message) => warnings.push(message) });
    const before = genRecordingSink('first');
    const after = genRecordingSink('last');
    const fail = () => {
      throw new Error('disk full');
    };
    sinks.add(before.sink);
    sinks.add({ name: 'broken output', onEvent: fail, onFailure: fail, onEnd: async () => fail(), close: fail });
    sinks.add(after.sink);
    sinks.onEvent(EVENT, 'session');
    sinks.onEvent(EVENT, 'subagent');
    await sinks.onFailure();
    expect(await sinks.onEnd(END)).toBe(0);
    await sinks.close(0);
    const expected = ['session Compacted', 'subagent Compacted', 'failure', 'end 0', 'close 0'];
    expect(before.calls).toEqual(expected);
    expect(after.calls).toEqual(expected);
    expect(warnings).toEqual(["the run's broken output failed on Compacted: disk full; the run goes on without what it missed"]);
  });

  it('a sink that changes the exit code at the end (a job summary not written) changes it for the sinks after it and for the run', async () => {
    const sinks = fanOutRunSinks({ warn: () => {} });
    const after = genRecordingSink('telemetry');
    sinks.add({ name: 'GitHub output', onEnd: (end) => (end.exitCode === 0 ? 5 : end.exitCode) });
    sinks.add(after.sink);
    expect(await sinks.onEnd(END)).toBe(5);
    expect(after.calls).toEqual(['end 5']);
  });
});

import type { RunTelemetry } from '../telemetry/startRunTelemetry.js';
import type { RunSink } from './RunSink.js';

/**
 * .what = OpenTelemetry's view of the stream (docs/telemetry.md): the session's and its subagents' events as spans and
 *         metrics, exported last, with the task and the answer as the run printed them
 * .why = last, after the answer and the refs: a collector that is down or slow delays the exit at most 2 s, never changes it
 */
export const genTelemetrySink = (telemetry: RunTelemetry): RunSink => {
  let said: { prompt: string | null; output: string | null } = { prompt: null, output: null };
  return {
    name: 'telemetry',
    onEvent: (event) => telemetry.onEvent(event),
    onEnd: (end) => {
      said = { prompt: end.prompt, output: end.answer };
    },
    close: (exitCode) => telemetry.close({ exitCode, ...said }),
  };
};

import { redactDeep } from '../../core/secrets/redactDeep.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { OUTPUT_SCHEMA_VERSION } from '../skillOutputJson.js';
import { asStreamJsonEvent } from './asStreamJsonEvent.js';
import type { RunSink } from './RunSink.js';

/**
 * .what = --output stream-json: a start object, every event of the run's session (in the result's names:
 *         asStreamJsonEvent), and with --include-partial-messages the streamed text (onDelta), one JSON object a line on
 *         stdout, each redacted (the result object follows, from the run)
 */
export const genStreamJsonSink = (input: {
  skill: string;
  writeLine: (value: unknown) => void;
  redact: SecretRedactor;
  /** whether the run was stopped (Ctrl-C, SIGTERM, its host): the session ends in error then, and the result says interrupted */
  interrupted: () => boolean;
}): RunSink => {
  const { writeLine, redact } = input;
  // the session's end in the result's word: a stopped run's session ends in error (AbortedError), its result interrupted
  const asResultSays = (event: ReturnType<typeof asStreamJsonEvent>) =>
    event.type === 'SessionCompleted' && event.termination === 'error' && input.interrupted()
      ? { ...event, termination: 'interrupted' as const }
      : event;
  return {
    name: 'stream-json output',
    onStart: (start) =>
      writeLine({
        type: 'start',
        schemaVersion: OUTPUT_SCHEMA_VERSION,
        skill: input.skill,
        atom: start.atom,
        cwd: start.cwd,
        record: start.record,
      }),
    onEvent: (event, origin) => {
      if (origin === 'session')
        writeLine(redactDeep({ schemaVersion: OUTPUT_SCHEMA_VERSION, ...asResultSays(asStreamJsonEvent(event)) }, redact));
    },
    // deltas come only with --include-partial-messages (the session streams them only then)
    onDelta: (delta) =>
      // the text streamed so far is void (a retried attempt, or <tool_call> markup that was a call): consumers drop it
      writeLine(
        delta.type === 'TextReset'
          ? { type: 'TextReset', schemaVersion: OUTPUT_SCHEMA_VERSION }
          : { type: delta.type, schemaVersion: OUTPUT_SCHEMA_VERSION, text: redact(delta.text) },
      ),
  };
};

import type { BhrainEvent } from '../../agent/events.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { redactDeep } from '../../core/secrets/redactDeep.js';
import type { ProgressLog } from '../genProgressLog.js';
import type { RunSink } from './RunSink.js';

/** a tool call's input is shown up to this many characters */
const MAX_INPUT_CHARS = 100;

/**
 * .what = a short rendering of a tool call's input for a progress line
 * .why = redacted before it is encoded and before it is cut: an escaped or a cut secret no longer matches its value
 */
const describeInput = (input: unknown, redact: SecretRedactor): string => {
  const record = redactDeep((input ?? {}) as Record<string, unknown>, redact);
  const main = record.command ?? record.path ?? record.pattern ?? record.query;
  const text = typeof main === 'string' ? main : JSON.stringify(record);
  if (text.length <= MAX_INPUT_CHARS) return text;
  // the cut never splits a surrogate pair, and a piece of a secret it leaves at the end is replaced
  const end = /[\uD800-\uDBFF]/.test(text[MAX_INPUT_CHARS - 1]) ? MAX_INPUT_CHARS - 1 : MAX_INPUT_CHARS;
  return `${redact.head(text.slice(0, end))}…`;
};

/** .what = how a denial came about, when it was not the guard's own decision */
const DENIED_BY: Record<string, string> = {
  prompt: ' (refused at the prompt)',
  'no-prompter': ' (it needs approval, and there is no terminal to ask on)',
  hook: ' (by a PreToolUse hook)',
};

/** .what = the progress line of an event, or null for the events the display does not show */
const renderEvent = (event: BhrainEvent, log: ProgressLog, redact: SecretRedactor): string | null => {
  const { color } = log;
  switch (event.type) {
    case 'ToolCallStarted':
      return `  ${color.dim('→')} ${event.toolName} ${color.dim(describeInput(event.input, redact))}`;
    case 'ToolExecutionCompleted':
      if (event.denied) return `  ${color.red('✗')} ${event.toolName} denied: ${event.denied.reason}${DENIED_BY[event.denied.by] ?? ''}`;
      return event.success ? null : `  ${color.red('✗')} ${event.toolName} (error, ${event.durationMs} ms)`;
    case 'IterationCompleted': {
      const calls = event.toolCallCount;
      return color.dim(
        `iteration ${event.iterationNumber}: ${calls} tool call${calls === 1 ? '' : 's'}, context ~${event.contextTokens} tokens`,
      );
    }
    case 'Compacted':
      return color.dim(`context compacted by ${event.strategy}: ${event.tokensBefore} → ${event.tokensAfter} tokens`);
    case 'SessionCompleted':
      return color.dim(`session ${event.termination} after ${event.iterations} iterations`);
    default:
      return null;
  }
};

/**
 * .what = the progress display on stderr: a line per tool call (its input), per failed or denied call, per iteration,
 *         per compaction and per session end, its subagents' too
 * .why = drawn from the typed events, never from the loop's log lines; the log writes it (colours, quiet, the byte cap)
 */
export const genProgressSink = (input: { log: ProgressLog; redact: SecretRedactor }): RunSink => ({
  name: 'progress display',
  onEvent: (event) => {
    const line = renderEvent(event, input.log, input.redact);
    if (line !== null) input.log.progress(line);
  },
});

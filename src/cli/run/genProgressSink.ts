import type { BhrainEvent } from '../../agent/events.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import { redactDeep } from '../../core/secrets/redactDeep.js';
import { pluralize } from '../../core/text/pluralize.js';
import type { ProgressLog } from '../genProgressLog.js';
import { describeTermination } from '../describeTermination.js';
import type { RunEventOrigin, RunSink } from './RunSink.js';

/** a tool call's input is shown up to this many characters */
const MAX_INPUT_CHARS = 100;

/** a failed tool call's reason is shown up to this many characters */
const MAX_REASON_CHARS = 100;

/**
 * .what = text cut to maxChars for a progress line, with an ellipsis when cut
 * .why = the cut never splits a surrogate pair, and a piece of a secret it leaves at the end is replaced (the text is
 *        redacted before it is cut: a cut secret no longer matches its value)
 */
const cutRedacted = (text: string, maxChars: number, redact: SecretRedactor): string => {
  if (text.length <= maxChars) return text;
  const end = /[\uD800-\uDBFF]/.test(text[maxChars - 1]) ? maxChars - 1 : maxChars;
  return `${redact.head(text.slice(0, end))}…`;
};

/**
 * .what = a short rendering of a tool call's input for a progress line
 * .why = redacted before it is encoded and before it is cut: an escaped or a cut secret no longer matches its value
 */
const describeInput = (input: unknown, redact: SecretRedactor): string => {
  const record = redactDeep((input ?? {}) as Record<string, unknown>, redact);
  const main = record.command ?? record.path ?? record.pattern ?? record.query;
  const text = typeof main === 'string' ? main : JSON.stringify(record);
  return cutRedacted(text, MAX_INPUT_CHARS, redact);
};

/**
 * .what = why a tool call failed, in one short line: the first line of the result the model read (`exit code: 3`,
 *         `tool not found: 'x'. Available tools: …`, `timed out after 300 ms; …`), redacted, then cut
 */
const describeFailure = (output: string, redact: SecretRedactor): string => {
  const firstLine = output.trim().split('\n', 1)[0].trim();
  return cutRedacted(redact(firstLine), MAX_REASON_CHARS, redact);
};

/** .what = how a denial came about, when it was not the guard's own decision */
const DENIED_BY: Record<string, string> = {
  prompt: ' (refused at the prompt)',
  'no-prompter': ' (it needs approval, and there is no terminal to ask on)',
  hook: ' (by a PreToolUse hook)',
};

/** .what = the progress line of an event, or null for the events the display does not show */
const renderEvent = (event: BhrainEvent, origin: RunEventOrigin, log: ProgressLog, redact: SecretRedactor): string | null => {
  const { color } = log;
  switch (event.type) {
    case 'ToolCallStarted':
      return `  ${color.dim('→')} ${event.toolName} ${color.dim(describeInput(event.input, redact))}`;
    case 'ToolExecutionCompleted': {
      if (event.denied) return `  ${color.red('✗')} ${event.toolName} denied: ${event.denied.reason}${DENIED_BY[event.denied.by] ?? ''}`;
      if (event.success) return null;
      const reason = describeFailure(event.output, redact);
      return `  ${color.red('✗')} ${event.toolName} failed${reason ? `: ${reason}` : ''} ${color.dim(`(${event.durationMs} ms)`)}`;
    }
    case 'IterationCompleted':
      return color.dim(
        `iteration ${event.iterationNumber}: ${pluralize(event.toolCallCount, 'tool call')}, context ~${event.contextTokens} tokens`,
      );
    case 'Compacted':
      return color.dim(`context compacted by ${event.strategy}: ${event.tokensBefore} → ${event.tokensAfter} tokens`);
    // a subagent's end; the run's own is the status line finishRun prints, in the JSON result's terms
    case 'SessionCompleted':
      return origin === 'subagent' ? color.dim(`subagent ${describeTermination(event)}`) : null;
    default:
      return null;
  }
};

/**
 * .what = the progress display on stderr: a line per tool call (its input), per failed call (why) or denied one, per
 *         iteration, per compaction, its subagents' too, and per subagent's end (the run's own end is finishRun's)
 * .why = drawn from the typed events, never from the loop's log lines; the log writes it (colours, quiet, the byte cap)
 */
export const genProgressSink = (input: { log: ProgressLog; redact: SecretRedactor }): RunSink => ({
  name: 'progress display',
  onEvent: (event, origin) => {
    const line = renderEvent(event, origin, input.log, input.redact);
    if (line !== null) input.log.progress(line);
  },
});

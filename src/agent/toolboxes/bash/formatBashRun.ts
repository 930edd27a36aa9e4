import type { BashRun } from '../../../sandbox/BashRun.js';
import type { BashStreamText } from '../../../process/BashStreamText.js';

// one stream's section; the trailing newline is dropped because sections are joined by newlines
const formatStream = (name: string, stream: BashStreamText): string | null => {
  if (stream.totalBytes === 0) return null;
  const body =
    stream.droppedBytes === 0
      ? stream.head
      : `${stream.head}\n[... ${stream.droppedBytes} bytes dropped from the middle of ${name}: ${stream.totalBytes} bytes in all, only the first and last part are kept ...]\n${stream.tail}`;
  return `--- ${name} ---\n${body.endsWith('\n') ? body.slice(0, -1) : body}`;
};

/**
 * .what = renders a bash run as the text the model reads: how it ended, notes, then stdout and stderr
 * .why = the model reasons about failures from this text, so the status comes first and says exactly what happened
 */
export const formatBashRun = (run: BashRun, options: { timeoutMs: number; notes: readonly string[] }): string => {
  const status = run.sandboxLost
    ? `${run.sandboxLost}; the exit code is unknown`
    : run.timedOut
      ? `timed out after ${options.timeoutMs} ms; the process group was killed`
      : run.aborted
        ? 'aborted by the caller; the process group was killed'
        : run.exitSignal
          ? `killed by signal ${run.exitSignal}`
          : `exit code: ${run.exitCode}`;
  const sections = [formatStream('stdout', run.stdout), formatStream('stderr', run.stderr)].filter(
    (section): section is string => section !== null,
  );
  return [status, ...options.notes, ...(sections.length ? sections : ['(no output)'])].join('\n');
};

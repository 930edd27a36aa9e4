import type { BrainLog } from '../contract/BrainContext.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** .what = a short rendering of a tool call's input for a progress line */
const describeInput = (input: unknown): string => {
  const record = (input ?? {}) as Record<string, unknown>;
  const main = record.command ?? record.path ?? record.pattern ?? record.query;
  const text = typeof main === 'string' ? main : JSON.stringify(record);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
};

/**
 * .what = the CLI's log: concise progress lines on stderr; a spinner only on a TTY; errors even when quiet
 * .why = stdout stays clean for pipes; CI logs get plain lines, never animation
 */
export const genProgressLog = (input: {
  stream: NodeJS.WriteStream;
  quiet: boolean;
  redact: (text: string) => string;
}): BrainLog & { stop: () => void } => {
  const { stream, quiet } = input;
  const animate = !!stream.isTTY && !quiet;
  let frame = 0;
  let spinning = false;
  const timer = animate
    ? setInterval(() => {
        spinning = true;
        stream.write(`\r${SPINNER[(frame = (frame + 1) % SPINNER.length)]} working…`);
      }, 100)
    : null;
  timer?.unref();
  const print = (line: string) => {
    if (spinning) stream.write('\r\x1b[2K');
    spinning = false;
    stream.write(`${input.redact(line)}\n`);
  };
  const progress = (message: string, meta?: Record<string, unknown>) => {
    if (quiet) return;
    if (message.startsWith('tool call ')) return print(`  → ${message.slice('tool call '.length)} ${describeInput(meta?.input)}`);
    if (message.startsWith('tool result ')) return meta?.success === false ? print(`  ✗ ${message.slice('tool result '.length)}`) : undefined;
    if (/^iteration \d+:|^session |^context compacted|^bhrain\./.test(message)) return print(message);
  };
  return {
    debug: () => {},
    info: progress,
    warn: (message) => !quiet && print(`warning: ${message}`),
    error: (message) => print(`error: ${message}`),
    stop: () => {
      if (timer) clearInterval(timer);
      if (spinning) stream.write('\r\x1b[2K');
    },
  };
};

import { Chalk, chalkStderr } from 'chalk';

import type { BrainLog } from '../core/contract/BrainContext.js';
import type { SecretRedactor } from '../core/secrets/genSecretRedactor.js';
import { redactDeep } from '../core/secrets/redactDeep.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

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

/**
 * .what = the colours of stderr: chalk's detection (a TTY, FORCE_COLOR), and none when NO_COLOR is set and not empty
 * .why = colour helps a person at a terminal and garbles a CI log; no-color.org's NO_COLOR is honoured, which chalk is not
 */
const genStderrColors = (env: Record<string, string | undefined>) => new Chalk({ level: env.NO_COLOR ? 0 : chalkStderr.level });

/** .what = how a denial came about, when it was not the guard's own decision */
const DENIED_BY: Record<string, string> = {
  prompt: ' (refused at the prompt)',
  'no-prompter': ' (it needs approval, and there is no terminal to ask on)',
  hook: ' (by a PreToolUse hook)',
};

/**
 * .what = the CLI's log: concise progress lines on stderr; a spinner only on a TTY; errors even when quiet
 * .why = stdout stays clean for pipes; CI logs get plain lines, never animation. Refs and the session's error are
 *        printed once, by the CLI at the end, so the loop's and the repl's own lines for them are not shown
 */
export const genProgressLog = (input: {
  stream: NodeJS.WriteStream;
  quiet: boolean;
  /** every line is redacted whole; a tool call's input is redacted before it is encoded or cut */
  redact: SecretRedactor;
  env: Record<string, string | undefined>;
  /** progress and warnings stop after this many bytes (one line says so); errors always show */
  maxBytes?: number;
}): BrainLog & { stop: () => void; pause: <T>(during: () => Promise<T>) => Promise<T> } => {
  const { stream, quiet } = input;
  const color = genStderrColors(input.env);
  const animate = !!stream.isTTY && !quiet;
  let frame = 0;
  let spinning = false;
  let paused = false;
  const timer = animate
    ? setInterval(() => {
        if (paused) return;
        spinning = true;
        stream.write(`\r${SPINNER[(frame = (frame + 1) % SPINNER.length)]} working…`);
      }, 100)
    : null;
  timer?.unref();
  const clearSpinner = () => {
    if (spinning) stream.write('\r\x1b[2K');
    spinning = false;
  };
  let written = 0;
  let capped = false;
  const print = (line: string) => {
    clearSpinner();
    const text = `${input.redact(line)}\n`;
    written += Buffer.byteLength(text);
    stream.write(text);
  };
  /** a progress line or a warning, unless quiet or past maxBytes */
  const printProgress = (line: string) => {
    if (quiet || capped) return;
    if (input.maxBytes !== undefined && written + Buffer.byteLength(line) > input.maxBytes) {
      capped = true;
      return print(color.dim(`… progress stops here (${input.maxBytes} bytes shown): the run goes on, and its record holds every step`));
    }
    print(line);
  };
  const progress = (message: string, meta?: Record<string, unknown>) => {
    if (quiet) return;
    if (message.startsWith('tool call '))
      return printProgress(
        `  ${color.dim('→')} ${message.slice('tool call '.length)} ${color.dim(describeInput(meta?.input, input.redact))}`,
      );
    if (message.startsWith('tool result ')) {
      const denied = meta?.denied as { by: string; reason: string } | undefined;
      if (denied)
        return printProgress(
          `  ${color.red('✗')} ${message.slice('tool result '.length).split(' ')[0]} denied: ${denied.reason}${DENIED_BY[denied.by] ?? ''}`,
        );
      return meta?.success === false ? printProgress(`  ${color.red('✗')} ${message.slice('tool result '.length)}`) : undefined;
    }
    if (/^iteration \d+:|^session |^context compacted/.test(message)) return printProgress(color.dim(message));
  };
  return {
    debug: () => {},
    info: progress,
    warn: (message) => printProgress(color.yellow(`warning: ${message}`)),
    // the error that ends an iteration ends the session too: the CLI prints it once, at the end
    error: (message) => !/^iteration \d+: /.test(message) && print(color.red(`error: ${message}`)),
    stop: () => {
      if (timer) clearInterval(timer);
      clearSpinner();
    },
    // a permission prompt waits for the user: the spinner must not draw over it
    pause: async (during) => {
      paused = true;
      clearSpinner();
      try {
        return await during();
      } finally {
        paused = false;
      }
    },
  };
};

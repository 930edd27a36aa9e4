import { Chalk, chalkStderr } from 'chalk';

import type { BrainLog } from '../core/contract/BrainContext.js';
import type { SecretRedactor } from '../core/secrets/genSecretRedactor.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * .what = the colours of stderr: chalk's detection (a TTY, FORCE_COLOR), and none when NO_COLOR is set and not empty
 * .why = colour helps a person at a terminal and garbles a CI log; no-color.org's NO_COLOR is honoured, which chalk is not
 */
const genStderrColors = (env: Record<string, string | undefined>) => new Chalk({ level: env.NO_COLOR ? 0 : chalkStderr.level });

/** .what = the CLI's log, with what the progress display draws with: its colours and a line of progress */
export type ProgressLog = BrainLog & {
  color: InstanceType<typeof Chalk>;
  /** a progress line, redacted whole; nothing when quiet or past maxBytes */
  progress: (line: string) => void;
  /** what the run's end says of its answer (an early stop's notice), redacted whole; shown even when quiet, as errors are */
  notice: (message: string) => void;
  stop: () => void;
  pause: <T>(during: () => Promise<T>) => Promise<T>;
};

/**
 * .what = the CLI's log: concise progress lines on stderr; a spinner only on a TTY; errors even when quiet
 * .why = stdout stays clean for pipes; CI logs get plain lines, never animation. Refs and the session's error are
 *        printed once, by the CLI at the end, so the loop's and the repl's own lines for them are not shown
 */
export const genProgressLog = (input: {
  stream: NodeJS.WriteStream;
  quiet: boolean;
  /** every line is redacted whole */
  redact: SecretRedactor;
  env: Record<string, string | undefined>;
  /** progress and warnings stop after this many bytes (one line says so); errors always show */
  maxBytes?: number;
}): ProgressLog => {
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
  return {
    color,
    // progress comes from the run's events (genProgressSink): the loop's own info and debug lines are not shown
    debug: () => {},
    info: () => {},
    progress: printProgress,
    // the error, budget or termination that ends the session: the CLI prints it once, at the end
    warn: (message, meta) => !meta?.endsSession && printProgress(color.yellow(`warning: ${message}`)),
    notice: (message) => print(color.yellow(message)),
    error: (message, meta) => !meta?.endsSession && print(color.red(`error: ${message}`)),
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

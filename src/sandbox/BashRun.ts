import type { BashStreamText } from './BashStreamText.js';
import type { CaptureBudget } from './CaptureBudget.js';

/** .what = what one bash call runs, and within which bounds, whether it runs in the sandbox or not */
export interface BashCommand {
  command: string;
  timeoutMs: number;
  maxCaptureBytes: number;
  /** shared by every running call of the toolbox */
  captureBudget?: CaptureBudget;
  /** how long the command has between SIGTERM and SIGKILL */
  killGraceMs: number;
}

/** .what = where one bash call runs: its working directory and environment, and the signal that aborts it */
export interface BashRunContext {
  cwd: string;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
}

/**
 * .what = what happened when one bash command ran: how it ended and what it printed
 * .why = the runner records facts; formatting them for the model is a separate step
 */
export interface BashRun {
  /** the exit code, null when the process was ended by a signal, a timeout or an abort */
  exitCode: number | null;
  /** the signal that ended bash itself, when it was not our own timeout or abort kill */
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** set when bash could not be started at all */
  spawnError?: string;
  /** set when the sandbox ended while the command ran, not by our timeout or abort: the output is what came before */
  sandboxLost?: string;
  stdout: BashStreamText;
  stderr: BashStreamText;
  elapsedMs: number;
}

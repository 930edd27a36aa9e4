import type { GroupEnd } from '../process/spawnGroup.js';
import type { CaptureBudget } from '../process/CaptureBudget.js';

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
 * .what = what happened when one bash command ran: how it ended and what it printed (spawnGroup's end, plus the sandbox's)
 * .why = the runner records facts; formatting them for the model is a separate step
 */
export interface BashRun extends GroupEnd {
  /** set when the sandbox ended while the command ran, not by our timeout or abort: the output is what came before */
  sandboxLost?: string;
}

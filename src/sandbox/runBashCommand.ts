import { randomBytes } from 'node:crypto';

import { killTagged } from '../process/killTagged.js';
import { spawnGroup } from '../process/spawnGroup.js';
import type { BashCommand, BashRun, BashRunContext } from './BashRun.js';

/** unsandboxed, every process a command starts inherits this variable, set to the call's own random value */
const BASH_TAG_ENV = 'BHRAIN_BASH_CALL';

/**
 * .what = runs `bash -c <command>` unconfined (the sandbox off) with a timeout, bounded capture, and no survivors: in
 *         its own process group (spawnGroup), followed by a bounded /proc scan for the processes that left the group
 *         but carry the call's tag (killTagged)
 * .why = a model's command may hang, ignore SIGTERM, print gigabytes, or leave background children; none may hurt the loop
 */
export const runBashCommand = async (input: BashCommand, context: BashRunContext): Promise<BashRun> => {
  // no pid namespace without the sandbox: the tag is what finds a process that left the group (setsid, set -m)
  const tag = { name: BASH_TAG_ENV, value: randomBytes(8).toString('hex') };
  // one scan per call: started when bash exits (freeing pipes an escaped process holds), awaited before the result
  let swept: Promise<unknown> | null = null;
  const sweep = (): Promise<unknown> => (swept ??= killTagged(tag));
  const capture = { maxBytes: input.maxCaptureBytes, budget: input.captureBudget };
  const run = await spawnGroup({
    command: 'bash',
    args: ['-c', input.command],
    cwd: context.cwd,
    env: { ...context.env, [tag.name]: tag.value },
    capture: { stdout: capture, stderr: capture },
    timeoutMs: input.timeoutMs,
    signal: context.signal,
    killGraceMs: input.killGraceMs,
    // the wait for pipes held by a process that cleared its environment (the tag cannot find it) is bounded
    closeGraceMs: input.killGraceMs,
    onExit: () => void sweep(),
  }).ended;
  // the call ends once nothing it started is left
  await sweep();
  return run;
};

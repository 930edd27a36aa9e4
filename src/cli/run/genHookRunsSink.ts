import type { BhrainHookCompletedEvent } from '../../agent/events.js';
import type { RunSink } from './RunSink.js';

/**
 * .what = collects every hook run of the run's session (HookCompleted), for its record (hooks.json); a failed one, or
 *         one that exited other than 0 or 2, goes in the JSON's warnings too (the log has shown it on stderr already)
 */
export const genHookRunsSink = (input: {
  warnings: string[];
  redact: (text: string) => string;
}): RunSink & { runs: BhrainHookCompletedEvent[] } => {
  const runs: BhrainHookCompletedEvent[] = [];
  return {
    name: 'hook runs',
    runs,
    onEvent: (event, origin) => {
      if (event.type !== 'HookCompleted' || origin !== 'session') return;
      runs.push(event);
      const what = `${event.hookEventName} hook '${event.hookName}'`;
      if (event.error) input.warnings.push(input.redact(`${what} failed: ${event.error}`));
      else if (event.exitCode !== null && event.exitCode !== 0 && event.exitCode !== 2)
        input.warnings.push(input.redact(`${what} exited ${event.exitCode}`));
    },
  };
};

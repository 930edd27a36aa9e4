import { EXIT_CODES } from './exitCodes.js';

/**
 * .what = calls onFirst at the first SIGINT or SIGTERM; a second one exits at once (130, interrupted)
 * .why = Ctrl-C or a CI cancel first stops gracefully (tools killed, refs saved); a user who sends it again means now.
 *        The CLI run and `bhrain mcp serve` both stop this way, so they share this one handler
 */
export const onStopSignals = (onFirst: (signal: NodeJS.Signals) => void): void => {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(EXIT_CODES.interrupted);
    stopping = true;
    onFirst(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
};

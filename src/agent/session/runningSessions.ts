import type { SessionState } from './SessionState.js';

/** the sessions of this process that are running now, by uuid: what BhrainLoop.terminate reaches */
const running = new Map<string, SessionState>();

/** .what = lists a session as running until the returned release is called */
export const holdRunning = (state: SessionState): (() => void) => {
  running.set(state.uuid, state);
  return () => void running.delete(state.uuid);
};

/** .what = the running session of this uuid, or null when it ended (or never ran in this process) */
export const findRunning = (uuid: string): SessionState | null => running.get(uuid) ?? null;

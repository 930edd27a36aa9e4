import type { BhrainSession } from '../BhrainSession.js';
import { iterate } from './iterate.js';
import { findRunning } from './runningSessions.js';
import { sessionOf } from './SessionState.js';

/**
 * .what = asks a running session to stop (docs/design/loop.md#terminate-on-request): it stops at its next boundary (before its next
 *         request to the model, or to the memory manager), letting the request or tool calls under way finish, and ends
 *         with termination 'terminated' and this reason on its result and entity; its subagents stop with it
 * .why = a graceful stop keeps every tool call answered and the transcript whole (to cut work under way short, abort
 *        context.signal instead). Returns the session entity as it stands: still ACTIVE until that boundary; a session
 *        that already ended (or never ran in this process) is returned as given, unchanged
 */
export const terminate = (input: { session: BhrainSession; reason: string }): BhrainSession => {
  const state = findRunning(input.session.uuid);
  if (!state) return input.session;
  if (!state.terminateRequest) {
    state.terminateRequest = { reason: input.reason };
    state.context.log.info(`session ${state.uuid}: termination asked (${input.reason}); it stops at its next boundary`);
  }
  return sessionOf(state);
};

/** .what = the BhrainLoop operations (docs/design/loop.md#iteration): iterate (one loop cycle over a session state) and terminate */
export const BhrainLoop = { iterate, terminate } as const;

import type { BrainTokens } from '../../core/contract/BrainOutput.js';
import type { BhrainSession, BhrainTermination } from '../BhrainSessionResult.js';

/** .what = the terminations in which the model answered; every other one (max-iterations, budget, error) stopped it */
const ANSWERED: ReadonlySet<BhrainTermination> = new Set(['complete', 'refusal', 'clarification']);

/** .what = the token usage of the session entity, from the loop's token counts */
const toTokenUsage = (tokens: BrainTokens): BhrainSession['tokenUsage'] => ({
  inputTokens: tokens.input,
  outputTokens: tokens.output,
  totalTokens: tokens.input + tokens.output,
  cacheGetTokens: tokens.cache.get,
  cacheSetTokens: tokens.cache.set,
});

/**
 * .what = the session entity of one run (seed 002 §2.1) and its transitions: ACTIVE at the start, updated after every
 *         iteration and subagent, COMPLETED or TERMINATED at the end; every new state goes to onChange as a frozen value
 * .why = a caller watches a running session (brain.session) without reading the loop's state; each state is a new
 *        immutable value, so one handed out earlier never changes under its holder
 */
export const trackSession = (input: { uuid: string; configUuid: string; onChange?: (session: BhrainSession) => void }) => {
  let current: BhrainSession = Object.freeze({
    uuid: input.uuid,
    configUuid: input.configUuid,
    status: 'ACTIVE',
    iterationCount: 0,
    tokenUsage: toTokenUsage({ input: 0, output: 0, cache: { get: 0, set: 0 } }),
    startedAt: new Date().toISOString(),
    endedAt: null,
  });
  const set = (next: Partial<BhrainSession>) => {
    current = Object.freeze({ ...current, ...next });
    input.onChange?.(current);
    return current;
  };
  input.onChange?.(current);
  return {
    current: () => current,
    /** the iterations done and the tokens used so far (subagents' included) */
    update: (progress: { iterationCount: number; tokens: BrainTokens }) =>
      set({ iterationCount: progress.iterationCount, tokenUsage: toTokenUsage(progress.tokens) }),
    end: (final: { termination: BhrainTermination; iterationCount: number; tokens: BrainTokens }) =>
      set({
        status: ANSWERED.has(final.termination) ? 'COMPLETED' : 'TERMINATED',
        iterationCount: final.iterationCount,
        tokenUsage: toTokenUsage(final.tokens),
        endedAt: new Date().toISOString(),
      }),
  };
};

import type { BrainMessage } from '../core/contract/BrainMessage.js';
import { silentLog } from '../core/contract/BrainContext.js';
import type { BhrainConfig, BhrainConfigResolved } from './BhrainConfig.js';
import { configureBhrain } from './configureBhrain.js';
import type { BhrainContext } from './BhrainContext.js';
import type { BhrainSession, BhrainSessionResult } from './BhrainSessionResult.js';
import type { BhrainEvent, BhrainEventListener } from './events.js';
import type { BhrainSpend } from './session/checkBudget.js';
import { runLoop } from './session/runLoop.js';
import type { BhrainToolBox } from './tool/BhrainToolBox.js';
import { genToolRegistry } from './tool/genToolRegistry.js';

/** .what = a configured bhrain.struct.v1 brain: invoke it, change its toolboxes, subscribe to its events */
export interface Bhrain {
  readonly config: BhrainConfigResolved;
  /**
   * the session entity of the latest invocation (seed 002 §2.1), live: ACTIVE while it runs, with its iterations and tokens
   * so far; COMPLETED or TERMINATED once it ended (as in its result's session). null before the first invocation
   */
  readonly session: BhrainSession | null;
  /**
   * history: prior messages to build on; instructions: extra system instructions for this session only;
   * spentBefore: spend made before this session that counts toward its budget (limits.maxBudgetUsd, maxTokens, maxWallTimeMs)
   */
  invoke: (
    input: { prompt: string; history?: readonly BrainMessage[]; instructions?: string; spentBefore?: BhrainSpend },
    context?: BhrainContext,
  ) => Promise<BhrainSessionResult>;
  toolBoxes: {
    add: (box: BhrainToolBox) => void;
    remove: (boxName: string) => void;
    list: () => readonly BhrainToolBox[];
  };
  subscribe: (listener: BhrainEventListener) => () => void;
}

/**
 * .what = validates a config (failing before any loop) and returns a brain over it
 * .why = toolboxes can be added or removed at runtime; the loop sees the change on its next iteration
 */
export const genBhrain = (config: BhrainConfig): Bhrain => {
  const resolved = configureBhrain(config);
  const registry = genToolRegistry(resolved.toolBoxes);
  const listeners = new Set<BhrainEventListener>();
  let latest: { session: BhrainSession | null } = { session: null };
  return {
    config: resolved,
    get session() {
      return latest.session;
    },
    toolBoxes: { add: registry.add, remove: registry.remove, list: registry.boxes },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    invoke: ({ prompt, history = [], instructions, spentBefore }, context = {}) => {
      const log = context.log ?? silentLog;
      const emit = (event: BhrainEvent) => {
        for (const listener of [...listeners, ...(context.onEvent ? [context.onEvent] : [])]) {
          try {
            listener(event);
          } catch (error) {
            // a broken subscriber must not break the session it observes
            log.error(`an event subscriber threw on ${event.type}: ${(error as Error)?.message ?? error}`);
          }
        }
      };
      // each invocation keeps its own slot: a session that started earlier and ends later does not overwrite a newer one
      const mine: { session: BhrainSession | null } = { session: null };
      latest = mine;
      const onSession = (session: BhrainSession) => void (mine.session = session);
      return runLoop({ config: resolved, registry, prompt, history, instructions, spentBefore, emit, context, onSession });
    },
  };
};

/** .what = runs one session: `invoke({ config, prompt }, context)` → the session result (seed 002, Bhrain.invoke) */
export const invoke = (input: { config: BhrainConfig; prompt: string }, context?: BhrainContext): Promise<BhrainSessionResult> =>
  genBhrain(input.config).invoke({ prompt: input.prompt }, context);

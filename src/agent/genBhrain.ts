import type { BrainMessage } from '../core/contract/BrainMessage.js';
import { silentLog } from '../core/contract/BrainContext.js';
import { BadRequestError } from '../core/contract/errors.js';
import type { BhrainConfig, BhrainConfigResolved } from './config/BhrainConfig.js';
import { checkGuardRules, configureBhrain } from './config/configureBhrain.js';
import type { BhrainContext } from './BhrainContext.js';
import type { BhrainSession } from './BhrainSession.js';
import type { BhrainSessionResult } from './BhrainSessionResult.js';
import type { BhrainEvent, BhrainEventListener } from './events.js';
import type { BhrainMemoryManager } from './memory/BhrainMemoryManager.js';
import type { BhrainPermissionGuard } from './permission/BhrainPermissionGuard.js';
import { terminate } from './session/BhrainLoop.js';
import type { BhrainSpend } from './session/checkBudget.js';
import { runSession } from './session/runSession.js';
import { sessionOf, type SessionState } from './session/SessionState.js';
import type { BhrainToolBox } from './tool/BhrainToolBox.js';
import { genToolRegistry } from './tool/genToolRegistry.js';

/** .what = a configured bhrain.struct.v1 brain: invoke it, change its plugins, stop it, subscribe to its events */
export interface Bhrain {
  /** the resolved config, with the memory manager and guard as they are now */
  readonly config: BhrainConfigResolved;
  /**
   * the session entity of the latest invocation (docs/design/loop.md#the-session-entity), live: ACTIVE while it runs, with its iterations, tokens,
   * messages and subagents so far; COMPLETED or TERMINATED once it ended (as in its result's session). null before the
   * first invocation
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
  /** updatable (docs/design/loop.md#config-and-plugins): the toolboxes; a running session sees a change on its next iteration */
  toolBoxes: {
    add: (box: BhrainToolBox) => void;
    remove: (boxName: string) => void;
    list: () => readonly BhrainToolBox[];
  };
  /** updatable (docs/design/loop.md#config-and-plugins): the memory manager; a running session consults the new one after its next iteration */
  memoryManager: { get: () => BhrainMemoryManager; set: (manager: BhrainMemoryManager) => void };
  /**
   * updatable (docs/design/loop.md#config-and-plugins): the permission guard; a running session's next turn is judged by the new one (its
   * running subagents keep the guard they were spawned under). The default toolboxes keep what they were built with
   * from the config's guard (its allowRead)
   */
  permissionGuard: { get: () => BhrainPermissionGuard; set: (guard: BhrainPermissionGuard) => void };
  /**
   * stops every session this brain is running (docs/design/loop.md#terminate-on-request): each ends at its next boundary with
   * termination 'terminated' and this reason; returns their entities as they stand (still ACTIVE)
   */
  terminate: (reason: string) => readonly BhrainSession[];
  subscribe: (listener: BhrainEventListener) => () => void;
}

/** .what = how a value that is not what was asked for reads in an error message */
const describeValue = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : typeof value === 'string'
          ? 'a string'
          : `${typeof value === 'undefined' ? 'nothing' : `a ${typeof value}`}${['number', 'boolean'].includes(typeof value) ? ` (${String(value)})` : ''}`;

/** .what = fails a plugin that lacks what the loop calls: a name and the functions named */
const assertPlugin = (what: string, plugin: unknown, functions: readonly string[]): void => {
  const given = plugin as Record<string, unknown> | null;
  const wrong = [
    ...(typeof given?.name === 'string' && given.name ? [] : ['a name (a non-empty string)']),
    ...functions.filter((name) => typeof given?.[name] !== 'function').map((name) => `${name} (a function)`),
  ];
  if (wrong.length) throw new BadRequestError(`${what} must have ${wrong.join(', ')}; got ${describeValue(plugin)}`);
};

/**
 * .what = checks what invoke was given before any session starts (docs/design/loop.md#invocation: invalid input is a clear error)
 * .why = a prompt that is not a string would otherwise fail deep in the loop as a raw TypeError
 */
const assertInvokeInput = (input: { prompt: unknown; history?: unknown }): void => {
  if (typeof input?.prompt !== 'string')
    throw new BadRequestError(
      `invoke needs prompt to be a string (the task, e.g. { prompt: 'summarize readme.md' }); got ${describeValue(input?.prompt)}`,
    );
  if (input.history !== undefined && !Array.isArray(input.history))
    throw new BadRequestError(`invoke needs history to be an array of messages, or absent; got ${describeValue(input.history)}`);
};

/**
 * .what = validates a config (failing before any loop) and returns a brain over it
 * .why = toolboxes, the memory manager and the guard can be changed at runtime; the loop sees the change on its next
 *        iteration
 * .note = checkpoints are wired per invoke, in its context: `brain.invoke({ prompt }, { cwd, checkpointer })` with
 *         `genGitCheckpointer({ cwd, home: getBhrainHome(), runId, ignoredMaxBytes: 0, retention }, { env })` (the CLI's,
 *         the default of `bhrain act`) or any BhrainCheckpointer; after the session, `checkpointer.checkpoints()` lists
 *         them, and planRewind / applyRewind put the files back (docs/library.md#checkpoints)
 */
export const genBhrain = (config: BhrainConfig): Bhrain => {
  let resolved = configureBhrain(config);
  const registry = genToolRegistry(resolved.toolBoxes);
  const listeners = new Set<BhrainEventListener>();
  // the sessions this brain runs now (what terminate stops), and the latest one's state (what session shows)
  const running = new Set<SessionState>();
  let latest: { state: SessionState | null } = { state: null };
  const plugins = () => ({ memoryManager: resolved.memoryManager, permissionGuard: resolved.permissionGuard });
  return {
    get config() {
      return resolved;
    },
    get session() {
      return latest.state && sessionOf(latest.state);
    },
    toolBoxes: { add: registry.add, remove: registry.remove, list: registry.boxes },
    memoryManager: {
      get: () => resolved.memoryManager,
      set: (manager) => {
        assertPlugin('a memory manager', manager, ['shouldUpdate', 'getUpdate']);
        resolved = { ...resolved, memoryManager: manager };
      },
    },
    permissionGuard: {
      get: () => resolved.permissionGuard,
      set: (guard) => {
        assertPlugin('a permission guard', guard, ['check']);
        if (guard.rules?.length) checkGuardRules(guard, registry.boxes());
        resolved = { ...resolved, permissionGuard: guard };
      },
    },
    terminate: (reason) => [...running].map((state) => terminate({ session: sessionOf(state), reason })),
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    invoke: async (input, context = {}) => {
      assertInvokeInput(input);
      const { prompt, history = [], instructions, spentBefore } = input;
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
      const mine: { state: SessionState | null } = { state: null };
      latest = mine;
      const onOpen = (state: SessionState) => {
        mine.state = state;
        running.add(state);
      };
      try {
        return await runSession({ config: resolved, plugins, registry, prompt, history, instructions, spentBefore, emit, context, onOpen });
      } finally {
        if (mine.state) running.delete(mine.state);
      }
    },
  };
};

/** .what = runs one session: `invoke({ config, prompt }, context)` → the session result (docs/design/loop.md#invocation) */
export const invoke = (input: { config: BhrainConfig; prompt: string }, context?: BhrainContext): Promise<BhrainSessionResult> =>
  genBhrain(input.config).invoke({ prompt: input.prompt }, context);

/**
 * .what = the Bhrain operations of docs/design/loop.md#invocation: invoke (a brain from the config, one session) and
 *         configure (a config validated and resolved, defaults filled in)
 * .why = the names of docs/design/loop.md#invocation beside ours: Bhrain.invoke is invokeBhrain, Bhrain.configure is configureBhrain
 */
export const Bhrain = { invoke, configure: (input: { config: BhrainConfig }) => configureBhrain(input.config) };

import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * .what = where refs and run records are kept: BHRAIN_HOME, else $XDG_STATE_HOME/bhrain, else ~/.local/state/bhrain,
 *         with ~ the environment's HOME (the user's, when it has none)
 * .why = its own module, so the tools that hide it from the model (resolveHiddenPaths) know it without the store's code
 */
export const getBhrainHome = (env: Record<string, string | undefined> = process.env): string =>
  env.BHRAIN_HOME || join(env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state'), 'bhrain');

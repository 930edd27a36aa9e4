import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * .what = where the user's own bhrain files live: settings.json and user-level AGENTS.md / CLAUDE.md
 * .why = one place for user configuration, the XDG way on every platform (as $BHRAIN_HOME is for state):
 *        $BHRAIN_CONFIG_DIR, else $XDG_CONFIG_HOME/bhrain, else ~/.config/bhrain
 */
export const getBhrainConfigDir = (env: Record<string, string | undefined> = process.env): string =>
  env.BHRAIN_CONFIG_DIR || join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'bhrain');

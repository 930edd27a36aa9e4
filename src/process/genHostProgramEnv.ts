import { delimiter } from 'node:path';

import { isUntrustedDirectory } from './findHostProgram.js';

/**
 * .what = the whole environment of a program bhrain runs itself, outside the sandbox, on the workspace (git for the
 *         status line and the audit, ripgrep for grep): PATH without relative entries or entries inside `untrusted`, HOME
 *         and XDG_CONFIG_HOME (where git and ripgrep find the user's own config), LANG and LC_ALL=C (output bhrain parses),
 *         then `extra`; nothing else of the caller's
 * .why = such a program runs what a repository may name (git's fsmonitor, filters, hooks): bhrain disarms each, and this
 *        keeps what one might still run from everything the caller holds (supplier keys, CI tokens, cloud credentials),
 *        and from variables that change what the program does (GIT_DIR, GIT_CONFIG_PARAMETERS, RIPGREP_CONFIG_PATH)
 */
export const genHostProgramEnv = (input: {
  env: Record<string, string | undefined>;
  untrusted: readonly string[];
  extra?: Record<string, string>;
}): Record<string, string> => {
  const path = (input.env.PATH ?? '')
    .split(delimiter)
    .filter((directory) => !isUntrustedDirectory(directory, input.untrusted))
    .join(delimiter);
  return {
    PATH: path,
    ...(input.env.HOME ? { HOME: input.env.HOME } : {}),
    ...(input.env.XDG_CONFIG_HOME ? { XDG_CONFIG_HOME: input.env.XDG_CONFIG_HOME } : {}),
    LANG: 'C',
    LC_ALL: 'C',
    ...input.extra,
  };
};

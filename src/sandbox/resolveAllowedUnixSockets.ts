import { lstatSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';

import { BadRequestError } from '../core/contract/errors.js';
import { expandListedPath } from './resolveHiddenPaths.js';

/** .what = a socket bash may reach: as listed, its real path, and what reaching it grants (for the user's warning) */
export interface AllowedUnixSocket {
  listed: string;
  realPath: string;
  grants: string;
}

/**
 * .what = what a socket grants whoever connects to it, by the kind its path names; the first match wins
 * .why = allowing a socket is allowing what its server does, outside any sandbox: the user is told in those terms
 */
const SOCKET_GRANTS: ReadonlyArray<{ kind: RegExp; grants: string }> = [
  {
    kind: /docker|podman|containerd|crio|buildkit/i,
    grants: "root on this machine: a command can start a privileged container with the host's file system mounted",
  },
  {
    kind: /(^|\/)bus$|dbus|system_bus_socket/i,
    grants: 'commands outside any sandbox (`systemd-run --user` through the session bus), and whatever else its services do',
  },
  { kind: /ssh|agent|gpg/i, grants: 'use of your keys (an ssh or gpg agent): a command can sign in wherever they open' },
];

/** .what = what connecting to a socket grants, in a few words for a warning */
export const describeUnixSocketGrant = (path: string): string =>
  SOCKET_GRANTS.find((each) => each.kind.test(path))?.grants ??
  'whatever the program that serves it does for anyone who connects, outside the sandbox';

/** .what = what is at a path, for a message: nothing, or the kind of file */
const describeFound = (path: string): string => {
  const found = lstatSync(path, { throwIfNoEntry: false });
  if (!found) return 'nothing is there';
  if (found.isDirectory()) return 'it is a directory';
  if (found.isFile()) return 'it is a regular file';
  return 'it is not a socket';
};

/**
 * .what = the sockets allowUnixSockets names, each checked to be a unix socket now, with its real path and what it grants
 * .why = fail loud: a name that is not a socket (a typo, a daemon not started, a directory) is a BadRequestError naming
 *        it, never an allowance of nothing, nor of something else
 */
export const resolveAllowedUnixSockets = (
  listed: readonly string[],
  context: { env: Record<string, string | undefined> },
): AllowedUnixSocket[] => {
  const home = context.env.HOME || homedir();
  return [...new Set(listed)].map((each) => {
    const path = expandListedPath(each, home, 'sandbox.allowUnixSockets');
    let realPath: string | null = null;
    try {
      realPath = realpathSync.native(path);
    } catch {
      // described below
    }
    if (!realPath || !lstatSync(realPath).isSocket())
      throw new BadRequestError(
        `sandbox.allowUnixSockets names ${JSON.stringify(each)}, which is not a unix socket (${describeFound(realPath ?? path)}): name a socket that exists, e.g. "/var/run/docker.sock", or remove it`,
      );
    return { listed: each, realPath, grants: describeUnixSocketGrant(realPath) };
  });
};

import { lstatSync, readFileSync, realpathSync } from 'node:fs';

import { isSeenInSandbox, type SandboxHidden } from './genBwrapArgs.js';
import { isUnder } from '../core/paths/isUnder.js';

/**
 * .what = the absolute paths of the unix sockets bound in this network namespace, as /proc/net/unix lists them (its
 *         last column; `@…` is an abstract name, which has no file; a socket bound by a relative path is listed as
 *         given, and not found here)
 * .note = one line per socket: `Num: RefCount Protocol Flags Type St Inode Path`, the path after the inode's single space
 */
const readBoundSocketPaths = (table: string): string[] => {
  const paths = new Set<string>();
  for (const line of table.split('\n')) {
    const path = /^\S+:(?:\s+\S+){5}\s+\d+ (\/.*)$/.exec(line)?.[1];
    if (path) paths.add(path);
  }
  return [...paths];
};

/** .what = a mount point as /proc/self/mountinfo writes it (space, tab, newline and backslash as \ooo), decoded */
const decodeMountPath = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/** .what = the mount points of this process's mount namespace (/proc/self/mountinfo's fifth field) */
const readMountPoints = (table: string): string[] =>
  table.split('\n').flatMap((line) => {
    const field = line.split(' ')[4];
    return field ? [decodeMountPath(field)] : [];
  });

/** .what = a path's real path, or null when it is gone or cannot be resolved */
const realPathOrNull = (path: string): string | null => {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
};

// the last lookup, kept while the two tables name the same paths: a call then reads them and compares a string
let kept: { listed: string; sockets: readonly string[] } | null = null;

/**
 * .what = the host's unix sockets a sandbox would reach by path, as real paths: every absolute path a socket is bound to
 *         in this network namespace (/proc/net/unix), and every mount point that is a socket (/proc/self/mountinfo,
 *         then lstat: a socket bound in from another namespace, such as a dev container's docker socket)
 * .why = by kind, not by name: a socket nobody listed (a new daemon's, a user service's) is found as the docker one is.
 *        Read at every call (two reads of /proc); resolved again only when the paths they name change
 * .note = not found: a socket bound in another network namespace whose file is visible here without being a mount
 *         point (a container's bind mount of a whole directory), and one bound by a relative path
 */
export const findHostSockets = (): readonly string[] => {
  const bound = readBoundSocketPaths(readFileSync('/proc/net/unix', 'utf8'));
  const mounted = readMountPoints(readFileSync('/proc/self/mountinfo', 'utf8'));
  const listed = `${bound.join('\0')}\0\0${mounted.join('\0')}`;
  if (kept?.listed === listed) return kept.sockets;
  const sockets = new Set<string>();
  for (const path of bound) {
    const real = realPathOrNull(path);
    if (real && lstatSync(real, { throwIfNoEntry: false })?.isSocket()) sockets.add(real);
  }
  for (const path of mounted) if (lstatSync(path, { throwIfNoEntry: false })?.isSocket()) sockets.add(realPathOrNull(path) ?? path);
  kept = { listed, sockets: [...sockets].sort() };
  return kept.sockets;
};

/**
 * .what = what a sandbox hides once unix sockets are allowed: every host socket (findHostSockets) the sandbox would show,
 *         but those allowed, as an empty read-only file over it; each allowed socket bound back at its own path, so
 *         one under /tmp (an ssh-agent's) or inside a hidden directory is there too
 * .why = with allowUnixSockets the seccomp filter lets a command make unix sockets, and cannot tell one path from
 *        another: the sockets it must not reach are taken out of its file system instead, so exactly those named open
 * .note = `allowed` are real paths (resolveAllowedUnixSockets); what the sandbox never shows (the host's /tmp, /proc,
 *         /dev, a hidden directory) needs no file over it
 */
export const hideHostSockets = (hidden: SandboxHidden, input: { allowed: readonly string[]; roots: readonly string[] }): SandboxHidden => {
  const hiddenFiles = new Set(hidden.files.map((file) => file.path));
  const toHide = findHostSockets().filter(
    (path) =>
      !input.allowed.includes(path) &&
      !hiddenFiles.has(path) &&
      isSeenInSandbox(path, input.roots) &&
      !hidden.dirs.some((dir) => isUnder(dir, path)),
  );
  return {
    dirs: hidden.dirs,
    files: [...hidden.files, ...toHide.map((path) => ({ path, text: '' }))],
    handedBack: [...hidden.handedBack, ...input.allowed.filter((path) => !hidden.handedBack.includes(path))],
  };
};

import { constants, existsSync, type Stats } from 'node:fs';
import { mkdir, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';

import { isUnder } from '../../../core/paths/isUnder.js';
import { findProtectedInRoots } from '../../permission/findOutsideWorkspace.js';
import type { BhrainToolContext } from '../../tool/BhrainToolBox.js';

/**
 * .what = what the permission check of one write or edit judged: the real path it saw, and whether the user approved
 *         changing that file although it lies outside the workspace, is a git hook or git's config, or has other hard links
 * .why = the check names a file, not a path string: if a link changes between the check and the write, the write refuses
 */
export interface WriteCheck {
  realPath: string;
  approved: boolean;
}

/** .what = the context write and edit run in: the loop's tool context, plus what the permission check judged for this call */
export type WriteToolContext = BhrainToolContext & { writeCheck?: WriteCheck | null };

/** .what = a file opened for a change, or why it was refused */
export type WriteTarget = { refusal: null; handle: FileHandle; realPath: string; created: boolean; stats: Stats } | { refusal: string };

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;

/** symlinks followed before giving up, as the kernel's ELOOP limit */
const MAX_SYMLINK_HOPS = 40;

// on Linux, `/proc/self/fd/<n>/<name>` finds <name> in the very directory <n> holds open, as openat(2) does, so a
// directory renamed or swapped for a symlink after it was checked cannot redirect the open
const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : null;

/** .what = a directory held open: its real path as the kernel reports it, and how to name an entry inside it */
interface PinnedDir {
  realPath: string;
  at: (name: string) => string;
  close: () => Promise<void>;
}

const pinDir = async (path: string, options: { noFollow: boolean }): Promise<PinnedDir> => {
  const handle = await open(path, O_RDONLY | O_DIRECTORY | (options.noFollow ? O_NOFOLLOW : 0));
  try {
    // without /proc (macOS) the real path is read by name just after the open: the gap is narrowed, not closed
    const realPath = PROC_FD ? await readlink(`${PROC_FD}/${handle.fd}`) : await realpath(path);
    const at = (name: string) => (PROC_FD ? `${PROC_FD}/${handle.fd}/${name}` : join(realPath, name));
    return { realPath, at, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
};

const codeOf = (error: unknown): unknown => (error as { code?: unknown })?.code;

/** .what = the target of the symlink at path, or null when path is not a symlink */
const readLinkOrNull = (path: string): Promise<string | null> => readlink(path).catch(() => null);

/**
 * .what = opens the file a write or edit changes, resolving its real path at the moment of the open, and refuses one that
 *         lies outside the workspace, in a protected path (PROTECTED_PATHS: git's hooks and config, shells' start-up
 *         files, editors' and agents' settings), or has other hard links, unless the user approved that very file
 * .why = a link made after the permission check (by bash, by a process in the background) would redirect a write by name;
 *        here each directory on the way is held open and checked, the last component is opened without following links,
 *        and the opened file's own path and link count are checked before a byte is written
 */
export const openInsideWorkspace = async (input: {
  /** the absolute path the model named */
  path: string;
  cwd: string;
  /** the directories the session may change besides cwd, real paths (resolveAddDirs) */
  addDirs?: readonly string[];
  /** write opens write-only; edit reads the file too */
  access: 'write' | 'edit';
  /** whether a missing file (and its missing directories) is created */
  create: boolean;
  /** what the permission check judged; null when the tool runs outside the loop, with no check before it */
  check: WriteCheck | null;
  /** the path as the model sees it, for the refusal */
  shown: string;
  /** the refusal of a real path hidden from the model (refuseHiddenPath), or null: no approval opens one */
  refuseHidden?: (realPath: string) => string | null;
}): Promise<WriteTarget> => {
  const workspace = await realpath(input.cwd);
  const roots = [workspace, ...(input.addDirs ?? [])];
  const checked = input.check?.realPath ?? null;
  const approved = input.check?.approved ? checked : null;
  // writable: inside a root of the workspace, but not in what a later program trusts
  const writable = (realPath: string) => roots.some((root) => isUnder(root, realPath)) && !findProtectedInRoots(roots, realPath);
  const fileAllowed = (realPath: string) => writable(realPath) || realPath === approved;
  // a directory is passed through when writable, or on the way to a root (`.`) or to the approved file
  const dirAllowed = (realPath: string) =>
    writable(realPath) || roots.some((root) => isUnder(realPath, root)) || (approved !== null && isUnder(realPath, dirname(approved)));
  const flags = (input.access === 'write' ? O_WRONLY : O_RDWR) | O_NOFOLLOW | O_NONBLOCK;
  /** the refusal of a file at realPath: another file than the one judged, or one not writable and not approved */
  const refuse = (realPath: string): WriteTarget => {
    const hidden = input.refuseHidden?.(realPath);
    if (hidden) return { refusal: hidden };
    if (checked !== null && realPath !== checked)
      return {
        refusal: `Refused to ${input.access} ${input.shown}: it now resolves to ${realPath}, not to ${checked} as when its permission was checked (a link on the way changed in between). Nothing was changed. Retry the call, so that the permission check sees the file as it is now.`,
      };
    const protectedPath = findProtectedInRoots(roots, realPath);
    if (protectedPath)
      return {
        refusal: `Refused to ${input.access} ${input.shown}: it resolves to ${realPath}, in ${protectedPath.shown}, a protected path (${protectedPath.trustedBy}, outside any sandbox), and changing it was not approved. Nothing was changed. Leave it to the user, or tell the user why this file must change: a permission rule naming the exact path, e.g. \`write(${isUnder(workspace, realPath) ? relative(workspace, realPath) : realPath})\`, allows it.`,
      };
    return {
      refusal: `Refused to ${input.access} ${input.shown}: it resolves to ${realPath}, outside the workspace ${roots.join(', ')}, and changing a file outside the workspace was not approved. Nothing was changed. Change files inside the workspace only, or tell the user why this file must change and let them approve it.`,
    };
  };
  const fileRefused = (realPath: string): boolean =>
    (checked !== null && realPath !== checked) || !fileAllowed(realPath) || !!input.refuseHidden?.(realPath);
  const notRegular: WriteTarget = {
    refusal: `Refused to ${input.access} ${input.shown}: it is not a regular file (a FIFO, socket or device). Nothing was changed. Give the path of a regular file.`,
  };

  /** one open attempt: the target opened or refused, or the path a symlink on the way leads to */
  const attempt = async (target: string): Promise<WriteTarget | { next: string }> => {
    // the deepest directory of the target that exists, held open; the missing ones below it are created one by one
    const missing: string[] = [];
    let existing = dirname(target);
    let dir: PinnedDir | null = null;
    while (!dir) {
      try {
        dir = await pinDir(await realpath(existing), { noFollow: false });
      } catch (error) {
        if (codeOf(error) !== 'ENOENT' || dirname(existing) === existing) throw error;
        missing.unshift(basename(existing));
        existing = dirname(existing);
      }
    }
    const name = basename(target);
    try {
      if (!dirAllowed(dir.realPath)) return refuse(join(dir.realPath, ...missing, name));
      for (const [index, part] of missing.entries()) {
        if (!dirAllowed(join(dir.realPath, part))) return refuse(join(dir.realPath, ...missing.slice(index), name));
        if (input.create)
          await mkdir(dir.at(part)).catch((error) => {
            if (codeOf(error) !== 'EEXIST') throw error;
          });
        let child: PinnedDir;
        try {
          child = await pinDir(dir.at(part), { noFollow: true });
        } catch (error) {
          // a symlink where a directory is missing (dangling, or made just now): resolved, and decided on like any other
          const link = ['ELOOP', 'ENOTDIR'].includes(codeOf(error) as string) ? await readLinkOrNull(dir.at(part)) : null;
          if (link === null) throw error;
          return { next: [isAbsolute(link) ? link : `${dir.realPath}/${link}`, ...missing.slice(index + 1), name].join('/') };
        }
        await dir.close();
        dir = child;
        if (!dirAllowed(dir.realPath)) return refuse(join(dir.realPath, ...missing.slice(index + 1), name));
      }

      let handle: FileHandle;
      let created = false;
      try {
        handle = await open(dir.at(name), flags);
      } catch (error) {
        // the last component is a symlink: its target is resolved from here and decided on in turn
        const link = codeOf(error) === 'ELOOP' ? await readLinkOrNull(dir.at(name)) : null;
        if (link !== null) return { next: isAbsolute(link) ? link : `${dir.realPath}/${link}` };
        // a FIFO with no reader, opened without blocking
        if (codeOf(error) === 'ENXIO') return notRegular;
        if (codeOf(error) !== 'ENOENT' || !input.create) throw error;
        if (fileRefused(join(dir.realPath, name))) return refuse(join(dir.realPath, name));
        try {
          handle = await open(dir.at(name), flags | O_CREAT | O_EXCL, 0o666);
          created = true;
        } catch (raced) {
          // something appeared under that name since the first open: look again
          if (codeOf(raced) !== 'EEXIST') throw raced;
          return { next: target };
        }
      }
      let handedOver = false;
      try {
        const stats = await handle.stat();
        if (!stats.isFile()) return notRegular;
        const realPath = PROC_FD ? await readlink(`${PROC_FD}/${handle.fd}`) : join(dir.realPath, name);
        if (fileRefused(realPath)) return refuse(realPath);
        if (stats.nlink > 1 && realPath !== approved)
          return {
            refusal: `Refused to ${input.access} ${input.shown}: it has ${stats.nlink} hard links, so the same file may also appear outside the workspace, and changing it was not approved. Nothing was changed. To change only this name, give it its own copy first (bash: cp -p ${input.shown} ${input.shown}.copy && mv ${input.shown}.copy ${input.shown}), then retry; or tell the user why and let them approve it.`,
          };
        handedOver = true;
        return { refusal: null, handle, realPath, created, stats };
      } finally {
        if (!handedOver) await handle.close();
      }
    } finally {
      await dir.close();
    }
  };

  let target = input.path;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const outcome = await attempt(target);
    if (!('next' in outcome)) return outcome;
    target = outcome.next;
  }
  throw Object.assign(new Error(`ELOOP: more than ${MAX_SYMLINK_HOPS} symlinks on the way to ${input.shown}`), { code: 'ELOOP' });
};

/**
 * .what = replaces the whole content of a file opened by openInsideWorkspace with text
 * .why = written through the descriptor that was checked, never reopened by name; the same inode keeps its mode and owner
 */
export const replaceContent = async (handle: FileHandle, text: string): Promise<void> => {
  const bytes = Buffer.from(text, 'utf8');
  await handle.truncate(0);
  for (let written = 0; written < bytes.length;)
    written += (await handle.write(bytes, written, bytes.length - written, written)).bytesWritten;
};

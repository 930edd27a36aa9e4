import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** a walk stops after reading this many directory entries, so no tree, however large, makes glob or grep run for ever */
export const WALK_MAX_ENTRIES = 200_000;

/** glob's walk stops after this long; grep's stops at grep's own deadline, since its time also goes to reading files */
export const WALK_MAX_MS = 10_000;

/**
 * .what = what walkTree yields: a regular file, a symbolic link (never followed, whatever it points to), or, last, the
 *         notice that the budget ran out
 * .why = a link is listed, not entered: a DAG of 24 levels of 2 links each would otherwise make 2^24 paths
 */
export type WalkedEntry =
  | {
      kind: 'file' | 'link';
      absolutePath: string;
      /** relative to the walk's root, '/'-separated */
      relativePath: string;
    }
  | { kind: 'stopped'; reason: 'entries' | 'time'; entries: number; elapsedMs: number };

/**
 * .what = the files and links under a directory, depth-first, each directory's entries sorted by name, within a budget
 * .why = glob and the built-in grep share one walk: it skips .git (and node_modules when asked), does not follow
 *        symbolic links below the root (as ripgrep without -L), and yields in ripgrep's --sort path order
 * .note = the root itself is followed when it is a link: a path named explicitly is searched, as ripgrep does
 */
export async function* walkTree(input: {
  root: string;
  /** skip entries named node_modules below the root (the root itself is never skipped) */
  skipNodeModules: boolean;
  /** return false to prune a directory (relative path, '/'-separated) */
  enterDirectory?: (relativePath: string) => boolean;
  /** stop after reading this many directory entries */
  maxEntries: number;
  /** stop at this time (ms since the epoch) */
  deadline: number;
  signal?: AbortSignal;
}): AsyncGenerator<WalkedEntry> {
  const startedAt = Date.now();
  let entries = 0;
  const stopped = (reason: 'entries' | 'time'): WalkedEntry => ({ kind: 'stopped', reason, entries, elapsedMs: Date.now() - startedAt });
  /** yields one directory's files and links; returns false once the budget is spent, so every level stops */
  const visit = async function* (directory: string, relativeDirectory: string): AsyncGenerator<WalkedEntry, boolean> {
    // an unreadable directory is skipped, as ripgrep does
    const list = await readdir(directory, { withFileTypes: true }).catch(() => null);
    if (!list) return true;
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of list) {
      if (input.signal?.aborted) throw input.signal.reason;
      if (entries >= input.maxEntries) {
        yield stopped('entries');
        return false;
      }
      if (Date.now() > input.deadline) {
        yield stopped('time');
        return false;
      }
      entries++;
      if (entry.name === '.git' || (input.skipNodeModules && entry.name === 'node_modules')) continue;
      const absolutePath = join(directory, entry.name);
      const relativePath = relativeDirectory === '' ? entry.name : `${relativeDirectory}/${entry.name}`;
      if (entry.isSymbolicLink()) yield { kind: 'link', absolutePath, relativePath };
      else if (entry.isFile()) yield { kind: 'file', absolutePath, relativePath };
      else if (entry.isDirectory() && (!input.enterDirectory || input.enterDirectory(relativePath)))
        if (!(yield* visit(absolutePath, relativePath))) return false;
    }
    return true;
  };
  yield* visit(input.root, '');
}

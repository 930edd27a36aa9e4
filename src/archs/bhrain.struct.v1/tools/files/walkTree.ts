import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** .what = one file found by walkTree */
export interface WalkedFile {
  absolutePath: string;
  /** relative to the walk's root, '/'-separated */
  relativePath: string;
}

/**
 * .what = the files under a directory, depth-first, each directory's entries sorted by name
 * .why = glob and the built-in grep share one walk: it skips .git (and node_modules when asked), follows symlinks
 *        but never into a directory that is its own ancestor, and yields in ripgrep's --sort path order
 */
export async function* walkTree(input: {
  root: string;
  /** skip entries named node_modules below the root (the root itself is never skipped) */
  skipNodeModules: boolean;
  /** return false to prune a directory (relative path, '/'-separated) */
  enterDirectory?: (relativePath: string) => boolean;
  signal?: AbortSignal;
}): AsyncGenerator<WalkedFile> {
  const rootStats = await stat(input.root);
  const visit = async function* (directory: string, relativeDirectory: string, ancestors: string[]): AsyncGenerator<WalkedFile> {
    // an unreadable directory is skipped, as ripgrep does
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => null);
    if (!entries) return;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (input.signal?.aborted) throw input.signal.reason;
      if (entry.name === '.git' || (input.skipNodeModules && entry.name === 'node_modules')) continue;
      const absolutePath = join(directory, entry.name);
      const relativePath = relativeDirectory === '' ? entry.name : `${relativeDirectory}/${entry.name}`;
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const target = await stat(absolutePath).catch(() => null);
        // a broken link is neither a file nor a directory
        if (!target) continue;
        isDirectory = target.isDirectory();
        isFile = target.isFile();
      }
      if (isFile) {
        yield { absolutePath, relativePath };
        continue;
      }
      if (!isDirectory || (input.enterDirectory && !input.enterDirectory(relativePath))) continue;
      const directoryStats = await stat(absolutePath).catch(() => null);
      if (!directoryStats) continue;
      // a symlink back to an ancestor would loop forever
      const identity = `${directoryStats.dev}:${directoryStats.ino}`;
      if (ancestors.includes(identity)) continue;
      yield* visit(absolutePath, relativePath, [...ancestors, identity]);
    }
  };
  yield* visit(input.root, '', [`${rootStats.dev}:${rootStats.ino}`]);
}

import type { GitIgnores } from './loadGitIgnores.js';

/**
 * .what = what a grep engine is asked: one root, one regex, an optional file glob, what to skip, a cap and a time limit
 * .why = ripgrep and the built-in engine take the same input and give the same result, so output is identical
 */
export interface GrepSearchInput {
  /** absolute path of the directory or file to search */
  root: string;
  rootIsFile: boolean;
  /** the regex, as the model wrote it */
  pattern: string;
  /** a ripgrep-style file glob: without '/' it matches names at any depth; a leading '!' excludes */
  glob?: string;
  /** skip node_modules directories below the root */
  skipNodeModules: boolean;
  /** skip directories whose names start with '.' below the root (.git is skipped always) */
  skipHiddenDirectories: boolean;
  /** absolute paths below the root (as a walk from it names them) never read: the paths hidden from the model */
  hidden: readonly string[];
  /** git's ignore rules around the root, when grep skips what git ignores; the rg engine lets rg read them itself */
  gitIgnores?: GitIgnores;
  /** stop after this many matches plus one (the extra one proves there are more) */
  maxMatches: number;
  timeoutMs: number;
  /** the built-in engine's walk stops after reading this many directory entries */
  maxWalkEntries: number;
  signal?: AbortSignal;
}

/** .what = one matching line: the file's absolute path, its 1-based line number, its text (maybe longer than shown) */
export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

/** .what = what a grep engine found, or why it could not search */
export type GrepSearchResult =
  | {
      kind: 'matches';
      matches: GrepMatch[];
      more: boolean;
      timedOut: boolean;
      /** built-in engine: the file the regex was still running on when the time ran out */
      stalledOn?: string;
      /** built-in engine: the walk stopped at its entry budget after this many entries */
      walkStoppedAtEntries?: number;
    }
  | { kind: 'invalid-pattern'; message: string }
  | { kind: 'failed'; message: string };

import { globMatcher } from './globs.js';
import type { WalkSelection } from './walkFiles.js';

/**
 * .what = grep's file filter, with ripgrep's --glob meaning: no '/' matches a name at any depth, a '/' anchors it to
 *         the search root, a leading '!' excludes; a path the glob matches is kept even when git ignores it, and any
 *         other file is dropped, as rg's overrides do
 * .why = the built-in engine must pick exactly the files ripgrep picks for the same glob
 * .note = a trailing '/**' matches what is inside a directory, not the directory itself, as in rg
 */
export const compileGrepGlob = (glob: string): { select: (relativePath: string, isDirectory: boolean) => WalkSelection } => {
  const negated = glob.startsWith('!');
  const body = (negated ? glob.slice(1) : glob).replace(/\/+$/, '');
  // a leading '/' anchors too
  const anchored = body.includes('/');
  const matches = globMatcher(body.replace(/^\/+/, '').replace(/\/\*\*$/, '/**/*'));
  return {
    select: (relativePath, isDirectory) => {
      const matched = matches(anchored ? relativePath : relativePath.slice(relativePath.lastIndexOf('/') + 1));
      if (negated) return matched ? 'exclude' : undefined;
      return matched ? 'include' : isDirectory ? undefined : 'exclude';
    },
  };
};

/**
 * .what = the model's regex as a JavaScript RegExp, or the error that explains why it is invalid
 * .why = Unicode mode first (\p{L} works, as in ripgrep), then legacy mode for patterns only it accepts;
 *        a leading (?i), ripgrep's case-insensitive flag, becomes the i flag
 */
export const compileGrepRegExp = (pattern: string): { regex: RegExp } | { error: string } => {
  const insensitive = pattern.startsWith('(?i)');
  const source = insensitive ? pattern.slice(4) : pattern;
  const flags = insensitive ? 'i' : '';
  try {
    return { regex: new RegExp(source, `${flags}u`) };
  } catch {
    try {
      return { regex: new RegExp(source, flags) };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }
};

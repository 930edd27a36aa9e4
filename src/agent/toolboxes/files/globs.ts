// the one glob dialect of the files tools and the permission rules, and the forms it is compiled to: a path test, a
// RegExp, a tree walk's pruning, and grep's file filter with ripgrep's --glob meaning
import picomatch from 'picomatch';

import type { WalkSelection } from './walkFiles.js';

/**
 * .what = the glob dialect of the files tools and permission rules, as picomatch options: '*' and '**' match dotfiles,
 *         '[!a-z]' negates a class, a leading '!' is plain text (grep's glob handles it itself), no extglobs
 * .why = glob, grep's file filter and path rules all read a glob the same way, and the way rg's globs do
 */
export const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, posix: true, nonegate: true, noextglob: true };

/**
 * .what = a glob with ( ) | and " escaped, which picomatch would read as a regex group, alternation or quotes
 * .why = they are plain characters in file names ('app/(marketing)/page.tsx') and in rg's globs
 */
export const escapeGlobLiterals = (pattern: string): string =>
  pattern.replace(/\\.|[()|"]/g, (match) => (match.length === 2 ? match : `\\${match}`));

/**
 * .what = a glob as a test of '/'-separated paths: '**' any depth (zero included), '*' '?' within a segment,
 *         '{a,b}' alternatives, '[abc]' classes
 * .why = glob and grep's file filter match paths with it; picomatch compiles it
 */
export const globMatcher = (pattern: string): ((path: string) => boolean) => picomatch(escapeGlobLiterals(pattern), GLOB_OPTIONS);

/**
 * .what = the same glob as a RegExp
 * .why = the permission rules match a path against a glob
 */
export const globToRegExp = (pattern: string): RegExp => picomatch.makeRe(escapeGlobLiterals(pattern), GLOB_OPTIONS);

/**
 * .what = a glob ready for a tree walk: whether a file path matches, and whether a directory could hold a match
 * .why = pruning directories that cannot match ('src/**' never enters 'test/') keeps glob fast in big trees
 * .note = paths are '/'-separated and relative to where the glob applies; a directory is pruned segment by segment,
 *         each matched by picomatch, until a '**' (which may hold anything) or the end of the directory's path
 */
export const compileGlob = (
  pattern: string,
): { matches: (relativePath: string) => boolean; couldContain: (relativeDirectory: string) => boolean } => {
  const escaped = escapeGlobLiterals(pattern);
  const parts = picomatch.scan(escaped, { parts: true }).parts ?? [escaped];
  // the parts are escaped already
  const partMatchers = parts.map((part) => picomatch(part, GLOB_OPTIONS));
  return {
    matches: globMatcher(pattern),
    couldContain: (relativeDirectory) => {
      const segments = relativeDirectory.split('/');
      for (let index = 0; index < segments.length; index++) {
        // the directory is as deep as the whole pattern: nothing inside it can match
        if (index >= parts.length) return false;
        // a '**', or braces holding a '/', may match any depth
        if (parts[index] === '**' || parts[index].includes('/')) return true;
        if (!partMatchers[index](segments[index])) return false;
      }
      return parts.length > segments.length;
    },
  };
};

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

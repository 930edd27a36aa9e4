import picomatch from 'picomatch';

import { escapeGlobLiterals, GLOB_OPTIONS, globMatcher } from './globs.js';

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

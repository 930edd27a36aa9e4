import { expandBraces } from './expandBraces.js';
import { globSegmentToRegExpSource } from './globSegmentToRegExpSource.js';
import { globToRegExp } from './globToRegExp.js';
import { splitGlobSegments } from './splitGlobSegments.js';

/**
 * .what = a glob ready for a tree walk: whether a file path matches, and whether a directory could hold a match
 * .why = pruning directories that cannot match ('src/**' never enters 'test/') keeps glob fast in big trees
 */
export const compileGlob = (
  pattern: string,
): { matches: (relativePath: string) => boolean; couldContain: (relativeDirectory: string) => boolean } => {
  const regex = globToRegExp(pattern);
  const alternatives = expandBraces(pattern).map((expanded) =>
    splitGlobSegments(expanded).map((segment) =>
      segment === '**' ? ('**' as const) : new RegExp(`^${globSegmentToRegExpSource(segment)}$`, 's'),
    ),
  );
  /** whether directory segments dir[j…] can be followed by a path that pattern segments[i…] match */
  const canPrefix = (segments: (RegExp | '**')[], directory: string[]): boolean => {
    const seen = new Set<number>();
    const visit = (i: number, j: number): boolean => {
      if (j === directory.length) return i < segments.length;
      if (i === segments.length) return false;
      const key = i * (directory.length + 1) + j;
      if (seen.has(key)) return false;
      seen.add(key);
      const segment = segments[i];
      if (segment === '**') return visit(i + 1, j) || visit(i, j + 1);
      return segment.test(directory[j]) && visit(i + 1, j + 1);
    };
    return visit(0, 0);
  };
  return {
    matches: (relativePath) => regex.test(relativePath),
    couldContain: (relativeDirectory) => {
      const directory = relativeDirectory.split('/').filter((segment) => segment !== '');
      return alternatives.some((segments) => canPrefix(segments, directory));
    },
  };
};

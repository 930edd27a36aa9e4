import { expandBraces } from './expandBraces.js';
import { globSegmentToRegExpSource } from './globSegmentToRegExpSource.js';
import { splitGlobSegments } from './splitGlobSegments.js';

/**
 * .what = a glob as a RegExp over '/'-separated relative paths: '**' any depth (zero included), '*' '?' within a segment,
 *         '{a,b}' alternatives, '[abc]' classes
 * .why = Node 20 has no fs.glob; one small matcher serves the glob tool and the built-in grep's file filter
 */
export const globToRegExp = (pattern: string): RegExp => {
  const alternatives = expandBraces(pattern).map((expanded) => {
    const segments = splitGlobSegments(expanded);
    let source = '';
    let needsSeparator = false;
    segments.forEach((segment, index) => {
      const last = index === segments.length - 1;
      if (segment !== '**') {
        source += (needsSeparator ? '/' : '') + globSegmentToRegExpSource(segment);
        needsSeparator = true;
      } else if (last) source += needsSeparator ? '/.*' : '.*';
      // a leading or middle '**' absorbs zero or more whole segments, with their separators
      else source += needsSeparator ? '(?:/.*)?' : '(?:.*/)?';
    });
    return source;
  });
  return new RegExp(`^(?:${alternatives.join('|')})$`, 's');
};

/** .what = text as a regex that matches it literally */
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * .what = one path segment of a glob (no '/', no braces) as regex source: '*' any run, '?' one char, '[a-z]' '[!x]' classes
 * .why = shared by the whole-path matcher and the per-directory pruning, so both agree on what a segment matches
 * .note = '*' and '?' match a leading dot too: dotfiles are found (only .git is skipped, by the walk)
 */
export const globSegmentToRegExpSource = (segment: string): string => {
  let source = '';
  for (let index = 0; index < segment.length; index++) {
    const char = segment[index];
    if (char === '\\' && index + 1 < segment.length) {
      source += escapeRegExp(segment[++index]);
    } else if (char === '*') {
      while (segment[index + 1] === '*') index++;
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '[') {
      let cursor = index + 1;
      const negated = segment[cursor] === '!' || segment[cursor] === '^';
      if (negated) cursor++;
      // a ']' right after '[' or '[!' is a literal member
      const close = segment.indexOf(']', segment[cursor] === ']' ? cursor + 1 : cursor);
      if (close === -1) {
        source += '\\[';
        continue;
      }
      const members = segment.slice(cursor, close).replace(/[\\\]^]/g, '\\$&');
      source += negated ? `[^/${members}]` : `[${members}]`;
      index = close;
    } else {
      source += escapeRegExp(char);
    }
  }
  return source;
};

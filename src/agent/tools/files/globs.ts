import picomatch from 'picomatch';

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

import { FilesToolInputError } from './FilesToolInputError.js';

/** a pattern like {a,b}{c,d}{e,f}… multiplies; past this many alternatives it is refused */
const MAX_EXPANSIONS = 1_024;

/**
 * .what = expands brace alternation: 'src/{a,b}/*.{ts,tsx}' → four patterns; nested braces work; '{x}' stays literal
 * .why = with braces gone, every pattern is a plain list of path segments, which is what directory pruning needs
 */
export const expandBraces = (pattern: string): string[] => {
  let depth = 0;
  let open = -1;
  const commas: number[] = [];
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === '\\') {
      index++;
      continue;
    }
    if (char === '[') {
      // a character class is literal text for braces: skip to its end
      const close = pattern.indexOf(']', index + 2);
      if (close !== -1) index = close;
      continue;
    }
    if (char === '{') {
      if (depth === 0) {
        open = index;
        commas.length = 0;
      }
      depth++;
    } else if (char === ',' && depth === 1) commas.push(index);
    else if (char === '}' && depth > 0) {
      depth--;
      if (depth === 0 && commas.length > 0) {
        const prefix = pattern.slice(0, open);
        const suffix = pattern.slice(index + 1);
        const bounds = [open, ...commas, index];
        const results = new Set<string>();
        for (let part = 0; part < bounds.length - 1; part++) {
          const alternative = pattern.slice(bounds[part] + 1, bounds[part + 1]);
          for (const expanded of expandBraces(prefix + alternative + suffix)) {
            results.add(expanded);
            if (results.size > MAX_EXPANSIONS)
              throw new FilesToolInputError(
                `the pattern's braces expand to more than ${MAX_EXPANSIONS} alternatives; use fewer {a,b} groups.`,
              );
          }
        }
        return [...results];
      }
      // braces without a comma are literal text, as in bash
    }
  }
  return [pattern];
};

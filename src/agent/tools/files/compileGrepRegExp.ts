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

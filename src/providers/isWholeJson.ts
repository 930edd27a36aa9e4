/**
 * .what = whether streamed text is one whole JSON value: false for text cut mid-value, and false for '' (or blanks),
 *         where no value has arrived at all
 * .why = the providers use it to tell a finished tool call from one the stream cut: a call whose arguments have not begun
 *        is not finished. (A call that ended with empty arguments reads as {} when its arguments are read,
 *        readToolArguments; here the question is only whether the stream delivered a value)
 */
export const isWholeJson = (json: string): boolean => {
  if (!json.trim()) return false;
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
};

/**
 * .what = the last call of a response the output-token limit stopped, when its arguments are not whole JSON; else null
 * .why = only the last call can be cut (calls stream in order); running it half-parsed would write half a file
 */
export const findCutToolCall = <T extends { json: string }>(calls: readonly T[]): T | null => {
  const last = calls[calls.length - 1];
  return last && !isWholeJson(last.json) ? last : null;
};

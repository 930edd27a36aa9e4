/**
 * .what = one line as `cat -n` shows it: the number right-aligned to 6 characters, a tab, the text
 * .why = read and edit show lines the same way, so numbers the model saw in one tool mean the same in the other
 */
export const formatNumberedLine = (lineNumber: number, text: string): string => `${String(lineNumber).padStart(6, ' ')}\t${text}`;

/** .what = a count with thousands separators (12,345), as the model reads numbers in results */
export const formatCount = (count: number): string => count.toLocaleString('en-US');

/** .what = a size the model can read at a glance: 512 bytes, 12.3 KB, 1.0 GB (binary units) */
export const formatBytes = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
};

/**
 * .what = one line as `cat -n` shows it: the number right-aligned to 6 characters, a tab, the text
 * .why = read and edit show lines the same way, so numbers the model saw in one tool mean the same in the other
 */
export const formatNumberedLine = (lineNumber: number, text: string): string => `${String(lineNumber).padStart(6, ' ')}\t${text}`;

/** .what = how many lines a text has, as `wc -l` would count them plus a final line without a break */
export const countLines = (text: string): number => {
  if (text === '') return 0;
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
};

/** .what = how many lines a text has, as `wc -l` would count them plus a final line without a break */
export const countLines = (text: string): number => {
  if (text === '') return 0;
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
};

/**
 * .what = a result's text as one line, cut at a word boundary to at most maxChars (with an ellipsis)
 * .why = ten full page extracts would flood the context; a few hundred characters is enough to decide what to open
 */
export const toSnippet = (text: string, maxChars = 300): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  const cut = flat.slice(0, maxChars - 1);
  const lastSpace = cut.lastIndexOf(' ');
  // a word boundary only when it keeps most of the text
  return `${lastSpace > maxChars * 0.7 ? cut.slice(0, lastSpace) : cut}…`;
};

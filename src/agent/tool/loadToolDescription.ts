import { readFileSync } from 'node:fs';

/**
 * .what = reads a tool's model-facing description from its sibling .txt file
 * .why = the text the model reads is product surface: it lives in its own file, reviewed like code
 */
export const loadToolDescription = (url: URL): string => readFileSync(url, 'utf8').trim();

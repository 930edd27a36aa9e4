import { createRequire } from 'node:module';

import type { Parser, Tree } from 'web-tree-sitter';

/** the bash grammar, resolved through the package so it is found from src/, dist/ and an installed package alike */
const GRAMMAR_PATH = createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');

let loading: Promise<Parser> | null = null;

/**
 * .what = the tree-sitter bash parser, loaded once (about 30 ms) on first use and shared after
 * .why = guards judge a real parse of each command line; the wasm load is paid only by sessions that check bash rules
 */
const loadBashParser = (): Promise<Parser> => {
  loading ??= (async () => {
    // imported here, not at the top: a run that never judges a bash line never loads tree-sitter (150 KB of glue)
    const { Language, Parser } = await import('web-tree-sitter');
    await Parser.init();
    const parser = new Parser();
    parser.setLanguage(await Language.load(GRAMMAR_PATH));
    return parser;
  })().catch((error: unknown) => {
    // a failed load is retried by the next call instead of failing every later check
    loading = null;
    throw new Error(
      `could not load the bash grammar from ${GRAMMAR_PATH} (${(error as Error).message}); reinstall the tree-sitter-bash package`,
    );
  });
  return loading;
};

/**
 * .what = a parser for one analysis: parses a command line, and any command string found inside it, synchronously
 * .why = `bash -c '…'` strings are parsed while walking the outer tree; only the grammar load is async
 */
export const genShellParser = async (): Promise<{ parse: (line: string) => Tree }> => {
  const parser = await loadBashParser();
  return {
    parse: (line) => {
      const tree = parser.parse(line);
      if (!tree) throw new Error('the bash parser returned no tree');
      return tree;
    },
  };
};

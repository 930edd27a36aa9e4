import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';

import { compileGrepGlob } from './compileGrepGlob.js';
import { compileGrepRegExp } from './compileGrepRegExp.js';
import { GREP_FILE_CONCURRENCY, GREP_MAX_FILE_BYTES } from './constants.js';
import type { GrepMatch, GrepSearchInput, GrepSearchResult } from './GrepSearch.js';
import { isBinary } from './isBinary.js';
import { walkTree, type WalkedFile } from './walkTree.js';

/** .what = the matching lines of one file; skips binaries and files over the size cap, as ripgrep does */
const searchFile = async (path: string, regex: RegExp, maxMatches: number): Promise<GrepMatch[]> => {
  const stats = await stat(path).catch(() => null);
  if (!stats || stats.size > GREP_MAX_FILE_BYTES) return [];
  const bytes = await readFile(path).catch(() => null);
  if (!bytes || isBinary(bytes)) return [];
  // ripgrep drops a UTF-8 byte-order mark
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const matches: GrepMatch[] = [];
  let line = 1;
  for (let start = 0; start < text.length && matches.length <= maxMatches; line++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const content = text.charCodeAt(end - 1) === 13 && end > start ? text.slice(start, end - 1) : text.slice(start, end);
    if (regex.test(content)) matches.push({ path, line, text: content });
    if (newline === -1) break;
    start = newline + 1;
  }
  return matches;
};

/**
 * .what = grep without ripgrep: walks the tree, reads files a few at a time, tests the regex on each line
 * .why = grep must work where rg is not installed, and give the same lines in the same order as the rg engine
 * .note = skips .git always, node_modules when walking from a parent, binaries (NUL in the first 8 KB), files over 10 MB
 */
export const grepWithBuiltin = async (input: GrepSearchInput): Promise<GrepSearchResult> => {
  const compiled = compileGrepRegExp(input.pattern);
  if ('error' in compiled) return { kind: 'invalid-pattern', message: compiled.error };
  const filter = input.glob === undefined ? undefined : compileGrepGlob(input.glob);
  const deadline = Date.now() + input.timeoutMs;
  const files: AsyncIterable<WalkedFile> | WalkedFile[] = input.rootIsFile
    ? [{ absolutePath: input.root, relativePath: basename(input.root) }]
    : walkTree({
        root: input.root,
        skipNodeModules: input.skipNodeModules,
        enterDirectory: filter ? (relativePath) => !filter.excludesDirectory(relativePath) : undefined,
        signal: input.signal,
      });

  const matches: GrepMatch[] = [];
  let batch: Promise<GrepMatch[]>[] = [];
  // results are taken in walk order, so a batch read in parallel still yields sorted output
  const drain = async (): Promise<boolean> => {
    for (const found of await Promise.all(batch)) {
      matches.push(...found);
      if (matches.length > input.maxMatches) return true;
    }
    batch = [];
    return false;
  };
  let timedOut = false;
  for await (const file of files) {
    if (filter && !input.rootIsFile && !filter.includesFile(file.relativePath)) continue;
    batch.push(searchFile(file.absolutePath, compiled.regex, input.maxMatches));
    if (batch.length < GREP_FILE_CONCURRENCY) continue;
    if (await drain()) break;
    if (Date.now() > deadline) {
      timedOut = true;
      break;
    }
  }
  if (matches.length <= input.maxMatches) await drain();
  const more = matches.length > input.maxMatches;
  return { kind: 'matches', matches: matches.slice(0, input.maxMatches), more, timedOut: timedOut && !more };
};

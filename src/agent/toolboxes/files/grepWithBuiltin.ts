import { compileGrepGlob } from './globs.js';
import { comparePaths } from './toolPaths.js';
import { GREP_FILE_CONCURRENCY, GREP_MAX_FILE_BYTES } from './constants.js';
import { genLineMatcher } from './genLineMatcher.js';
import { readBoundedFile } from './readBoundedFile.js';
import type { GrepMatch, GrepSearchInput, GrepSearchResult } from './GrepSearch.js';
import { walkFiles, type WalkStop } from './walkFiles.js';

/**
 * .what = a file's bytes when grep should search it: a regular file (a link only when named as the path), not a
 *         binary and not over the size cap, as ripgrep without -L skips links and skips those; the cap counts bytes as
 *         read (a /proc file's stat says 0), a binary is known from its first 8 KB, and `signal` stops the read
 */
const readSearchable = async (path: string, followLink: boolean, signal: AbortSignal): Promise<Uint8Array | null> => {
  const read = await readBoundedFile({ path, maxBytes: GREP_MAX_FILE_BYTES, followLinks: followLink, sniffBinary: true, signal }).catch(
    () => null,
  );
  return read?.kind === 'read' && !read.more ? read.bytes : null;
};

/**
 * .what = the model's regex as a JavaScript RegExp, or the error that explains why it is invalid
 * .why = Unicode mode first (\p{L} works, as in ripgrep), then legacy mode for patterns only it accepts;
 *        a leading (?i), ripgrep's case-insensitive flag, becomes the i flag
 */
const compileGrepRegExp = (pattern: string): { regex: RegExp } | { error: string } => {
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

/** .what = why a search ended before its walk did: the deadline, the abort signal, or the worker's failure */
type Interruption = { kind: 'deadline' } | { kind: 'aborted' } | { kind: 'failed'; error: Error };

/**
 * .what = grep without ripgrep: walks the tree and reads files a few at a time here, tests the regex in a worker
 * .why = grep must work where rg is not installed, give the same lines in the same order as the rg engine, and never
 *        let a runaway regex hold the event loop: the deadline or an abort ends the worker at once
 * .note = skips .git always; what git ignores, hidden directories and node_modules as asked; symbolic links below the
 *         root, binaries (NUL in the first 8 KB), files over 10 MB; files are searched in path order, as rg --sort path
 */
export const grepWithBuiltin = async (input: GrepSearchInput): Promise<GrepSearchResult> => {
  const compiled = compileGrepRegExp(input.pattern);
  if ('error' in compiled) return { kind: 'invalid-pattern', message: compiled.error };
  const filter = input.glob === undefined ? undefined : compileGrepGlob(input.glob);
  const deadline = Date.now() + input.timeoutMs;
  // the regex worker starts while the tree is walked
  const matcher = genLineMatcher({ regex: compiled.regex, maxMatches: input.maxMatches });
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  // the file reads still running stop between two chunks at the deadline, an abort, or the search's end
  const reads = new AbortController();
  // settles at whichever comes first, even while the worker is inside one long match
  const interrupted = new Promise<Interruption>((resolve) => {
    timer = setTimeout(() => {
      reads.abort();
      resolve({ kind: 'deadline' });
    }, input.timeoutMs);
    onAbort = () => {
      reads.abort();
      resolve({ kind: 'aborted' });
    };
    if (input.signal?.aborted) onAbort();
    input.signal?.addEventListener('abort', onAbort, { once: true });
    void matcher.failed.then((error) => resolve({ kind: 'failed', error }));
  });

  try {
    const walk = input.rootIsFile
      ? { files: [input.root] }
      : await walkFiles({
          root: input.root,
          gitIgnores: input.gitIgnores,
          skipHiddenDirectories: input.skipHiddenDirectories,
          skipNodeModules: input.skipNodeModules,
          hidden: input.hidden,
          select: filter?.select,
          maxEntries: input.maxWalkEntries,
          deadline,
          signal: input.signal,
        });
    const walkStop: WalkStop | undefined = 'stop' in walk ? walk.stop : undefined;
    // in rg's --sort path order, so the matches kept at the cap are the ones rg keeps
    const files = walk.files.sort(comparePaths);
    const matches: GrepMatch[] = [];
    let batch: Promise<GrepMatch[]>[] = [];
    let stop: Interruption | undefined;
    // results are taken in path order, so a batch read in parallel still yields sorted output; each file's answer is
    // kept as it comes, so the files matched before an interruption stay in the result
    const drain = async (): Promise<boolean> => {
      const taken = batch;
      batch = [];
      for (const pending of taken) {
        const found = await Promise.race([pending, interrupted]);
        if (!Array.isArray(found)) {
          stop = found;
          return true;
        }
        matches.push(...found);
        if (matches.length > input.maxMatches) return true;
      }
      return false;
    };
    let handedOver = Promise.resolve();
    let ended = false;
    // a walk stopped by the clock leaves no time to read what it found
    for (const path of walkStop?.reason === 'time' ? [] : files) {
      // files are read in parallel but handed to the worker in path order, so a file that stalls the regex holds up
      // only the files after it, never one before it
      const read = readSearchable(path, input.rootIsFile, reads.signal);
      const turn = handedOver;
      let handOver = () => {};
      handedOver = new Promise((resolve) => (handOver = resolve));
      batch.push(
        (async () => {
          const bytes = await read;
          await turn;
          const answer = bytes ? matcher.match(path, bytes) : Promise.resolve([]);
          handOver();
          return (await answer).map((match) => ({ path, ...match }));
        })(),
      );
      if (batch.length >= GREP_FILE_CONCURRENCY && (await drain())) {
        ended = true;
        break;
      }
    }
    if (!ended) await drain();
    if (stop?.kind === 'aborted') throw input.signal?.reason;
    if (stop?.kind === 'failed') return { kind: 'failed', message: `The built-in grep failed: ${stop.error.message}` };
    // the file the worker was still matching when time ran out: most likely a runaway regex
    const stalledOn = stop?.kind === 'deadline' ? matcher.busyWith() : undefined;
    const more = matches.length > input.maxMatches;
    const timedOut = (stop?.kind === 'deadline' || walkStop?.reason === 'time') && !more;
    return {
      kind: 'matches',
      matches: matches.slice(0, input.maxMatches),
      more,
      timedOut,
      ...(timedOut && stalledOn !== undefined ? { stalledOn } : {}),
      ...(walkStop?.reason === 'entries' && !more ? { walkStoppedAtEntries: walkStop.entries } : {}),
    };
  } finally {
    clearTimeout(timer);
    reads.abort();
    input.signal?.removeEventListener('abort', onAbort);
    await matcher.close();
  }
};

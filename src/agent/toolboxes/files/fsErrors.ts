// the texts the model reads when a files tool meets a path that does not exist or a file system that fails: what went
// wrong, and what to do next
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { SIMILAR_NAMES_MAX } from './constants.js';
import { displayPath } from './toolPaths.js';

/** what each errno means for the model, and what it can do about it */
const CAUSES: Record<string, { cause: string; fix: string }> = {
  ENOENT: { cause: 'no such file or directory', fix: 'Check the path, or find the file with glob.' },
  EACCES: { cause: 'permission denied', fix: 'Check the permissions, or use a path you may access.' },
  EPERM: { cause: 'operation not permitted', fix: 'Check the permissions, or use a path you may access.' },
  EROFS: { cause: 'the file system is read-only', fix: 'Use a path on a writable file system.' },
  EISDIR: { cause: 'it is a directory, not a file', fix: 'Give the path of a file inside it.' },
  ENOTDIR: {
    cause: 'a component of the path is a file, not a directory',
    fix: 'Check each directory in the path.',
  },
  ENOSPC: { cause: 'no space left on the device', fix: 'Free space, or write somewhere else.' },
  EDQUOT: { cause: 'the disk quota is exceeded', fix: 'Free space, or write somewhere else.' },
  ELOOP: { cause: 'too many levels of symbolic links', fix: 'Resolve the symlink loop, or use the real path.' },
  ENAMETOOLONG: { cause: 'the path is too long', fix: 'Use a shorter path.' },
  EMFILE: { cause: 'too many open files', fix: 'Retry in a moment.' },
  ENFILE: { cause: 'too many open files in the system', fix: 'Retry in a moment.' },
  EBUSY: { cause: 'the file is busy', fix: 'Retry in a moment.' },
  ETXTBSY: { cause: 'the file is a running executable', fix: 'Stop the process, or write elsewhere.' },
  EEXIST: { cause: 'the path already exists', fix: 'Choose another path.' },
  EINVAL: { cause: 'the path or operation is invalid here', fix: 'Check the path.' },
  EIO: {
    cause: 'an input/output error (a failing device, or a special file that does not accept this)',
    fix: 'Use a regular file on a working disk.',
  },
};

/**
 * .what = a file-system failure as a sentence the model can act on: the action, the path, the cause and a fix
 * .why = a raw "EACCES: permission denied, open '/x'" names the code; the model also needs what to do next
 */
export const describeFsError = (input: { error: unknown; action: string; path: string }): string => {
  const code = (input.error as { code?: unknown })?.code;
  const known = typeof code === 'string' ? CAUSES[code] : undefined;
  if (known) return `Cannot ${input.action} ${input.path}: ${known.cause} (${code}). ${known.fix}`;
  const message = input.error instanceof Error ? input.error.message : String(input.error);
  return `Cannot ${input.action} ${input.path}: ${message}`;
};

/** .what = the edit distance between two short strings (insert, delete, substitute, swap two neighbours) */
const distance = (a: string, b: string): number => {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      // a typo that swaps two letters ('scr' for 'src') counts once
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  return rows[a.length][b.length];
};

/** .what = a name without its last extension: 'index.test.ts' → 'index.test' */
const stemOf = (name: string): string => (name.lastIndexOf('.') > 0 ? name.slice(0, name.lastIndexOf('.')) : name);

/**
 * .what = up to 5 names in a directory that look like the name the model asked for (typo, case, other extension)
 * .why = "not found" alone makes the model search; "did you mean utils.ts" lets it retry at once
 */
const findSimilarNames = async (directory: string, name: string): Promise<string[]> => {
  const entries = await readdir(directory).catch(() => [] as string[]);
  const wanted = name.toLowerCase();
  const wantedStem = stemOf(wanted);
  // a typo budget that grows with the name, so 'a.ts' does not match everything
  const budget = Math.max(1, Math.floor(wanted.length / 4));
  const scored: { entry: string; score: number }[] = [];
  for (const entry of entries.slice(0, 10_000)) {
    const candidate = entry.toLowerCase();
    if (entry === name) continue;
    const candidateStem = stemOf(candidate);
    const editDistance = distance(wanted.slice(0, 100), candidate.slice(0, 100));
    const sameStem = candidateStem === wantedStem && wantedStem.length > 0;
    const contains = wantedStem.length >= 3 && (candidate.includes(wantedStem) || wanted.includes(candidateStem));
    if (editDistance <= budget || sameStem || (contains && candidateStem.length >= 3))
      scored.push({ entry, score: sameStem ? -1 : editDistance });
  }
  return scored
    .sort((a, b) => a.score - b.score || (a.entry < b.entry ? -1 : 1))
    .slice(0, SIMILAR_NAMES_MAX)
    .map((item) => item.entry);
};

/**
 * .what = explains a path that does not exist: which part is missing, and similarly named entries beside it
 * .why = the model recovers from a wrong path in one step when it is shown the likely right one
 */
export const describeMissingPath = async (input: { path: string; cwd: string; kind: 'file' | 'path' }): Promise<string> => {
  // the deepest existing ancestor tells which component is wrong
  let missing = input.path;
  let parent = dirname(missing);
  while (
    parent !== missing &&
    !(await stat(parent)
      .then((stats) => stats.isDirectory())
      .catch(() => false))
  ) {
    missing = parent;
    parent = dirname(parent);
  }
  const shown = displayPath(input.path, input.cwd);
  const what = input.kind === 'file' ? 'File' : 'Path';
  const head =
    missing === input.path
      ? `${what} not found: ${shown}.`
      : `${what} not found: ${shown} (the directory ${displayPath(missing, input.cwd)} does not exist).`;
  const similar = await findSimilarNames(parent, basename(missing));
  const shownParent = displayPath(parent, input.cwd);
  const where = shownParent === '.' ? 'the working directory' : shownParent;
  if (similar.length === 0)
    return `${head} No similarly named entries in ${where}. Find it with glob { pattern: "**/${basename(input.path)}" }.`;
  const names = similar.map((name) => displayPath(join(parent, name), input.cwd)).join(', ');
  return `${head} Did you mean: ${names}?`;
};

import { open, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { silentLog, type BrainLog } from '../../core/contract/BrainContext.js';
import { BadRequestError } from '../../core/contract/errors.js';
import { findRepoRoot, listProjectDirs } from '../git/findRepoRoot.js';
import { getBhrainConfigDir } from '../config/getBhrainConfigDir.js';

/** .what = the instruction files read in every directory, in this order */
export const PROJECT_INSTRUCTION_FILE_NAMES = ['AGENTS.md', 'CLAUDE.md'] as const;

/** .what = the cap on the bytes of instruction text put in the system prompt, all files together (about 8k tokens) */
export const DEFAULT_PROJECT_INSTRUCTIONS_MAX_BYTES = 32 * 1024;

/** .what = one instruction file that was found and read */
export interface ProjectInstructionFile {
  /** absolute */
  path: string;
  /** user: from the bhrain config dir; project: from the repository (or the working directory outside one) */
  scope: 'user' | 'project';
  /** its size in bytes */
  bytes: number;
  /** the bytes of it in `text`: all of them, fewer when the cap cut it, 0 when the cap left it out */
  keptBytes: number;
}

/** .what = the instructions found for a working directory, ready for config.instructions */
export interface ProjectInstructions {
  /** one `<file path="…">` element per file, most general first, a notice where the cap cut; '' when none were found */
  text: string;
  /** the files read, in the order of `text` */
  files: ProjectInstructionFile[];
  /** the repository the working directory is in; null outside one (then only the working directory is read) */
  repoRoot: string | null;
  /** whether the cap cut or left out any file */
  cut: boolean;
}

/** .what = the byte length of a UTF-8 prefix of `bytes` that does not end inside a character */
const completeUtf8Length = (bytes: Uint8Array): number => {
  let start = bytes.length;
  // step back over continuation bytes to the lead byte of the last character
  while (start > 0 && bytes.length - start < 4 && (bytes[start - 1] & 0xc0) === 0x80) start--;
  if (start === 0) return bytes.length;
  const lead = bytes[start - 1];
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - (start - 1) >= need ? bytes.length : start - 1;
};

/** .what = the text cut to at most `maxBytes` UTF-8 bytes, never inside a character */
const cutUtf8 = (text: string, maxBytes: number): string => {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= maxBytes ? text : bytes.subarray(0, completeUtf8Length(bytes.subarray(0, maxBytes))).toString('utf8');
};

/**
 * .what = one instruction file's text (its first `maxBytes` and a little more), or null when it is absent or unusable
 * .why = a missing file is the usual case and says nothing; an unreadable or non-text one is warned about and skipped,
 *        never a crash; only a bounded prefix is read, so a huge file costs nothing
 */
const readInstructionFile = async (path: string, maxBytes: number, log: BrainLog): Promise<{ text: string; bytes: number } | null> => {
  const warnSkipped = (why: string) => {
    log.warn(`project instructions: ${path} ${why}; it is skipped`);
    return null;
  };
  const stats = await stat(path).catch((error: NodeJS.ErrnoException) => error);
  if (stats instanceof Error)
    return ['ENOENT', 'ENOTDIR'].includes(stats.code ?? '') ? null : warnSkipped(`could not be read (${stats.code ?? stats.message})`);
  // a directory or a fifo by that name: opening a fifo would wait for a writer
  if (!stats.isFile()) return warnSkipped('is not a regular file');
  let prefix: Uint8Array;
  try {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(stats.size, maxBytes + 4));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      prefix = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return warnSkipped(`could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (prefix.includes(0)) return warnSkipped('is binary, not text');
  const whole = prefix.length >= stats.size;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(whole ? prefix : prefix.subarray(0, completeUtf8Length(prefix)));
  } catch {
    return warnSkipped('is not UTF-8 text');
  }
  if (!text.trim()) {
    log.debug(`project instructions: ${path} is empty`);
    return null;
  }
  return { text, bytes: stats.size };
};

/**
 * .what = the bytes each file keeps under the cap: an equal share each, and what a smaller file does not use goes to the
 *         others (max-min fair), so small files stay whole and only the largest are cut
 * .why = one huge file must not push out the short rules of every other level
 */
const shareBytes = (sizes: readonly number[], maxBytes: number): number[] => {
  const kept = sizes.map(() => 0);
  let left = maxBytes;
  const smallestFirst = sizes.map((_, index) => index).sort((a, b) => sizes[a] - sizes[b]);
  smallestFirst.forEach((index, position) => {
    kept[index] = Math.min(sizes[index], Math.floor(left / (smallestFirst.length - position)));
    left -= kept[index];
  });
  return kept;
};

/** .what = a value for a double-quoted attribute */
const asAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * .what = reads the project instructions for a working directory: AGENTS.md and CLAUDE.md in the bhrain config dir (the
 *         user's own), then in every directory from the repository root down to the working directory (only the working
 *         directory outside a repository); most general first, nearest last, each labelled with its path
 * .why = the text goes in the system prompt (config.instructions), so it survives compaction. The total is capped at
 *        maxBytes (32 KiB) of file text, shared so that small files stay whole and only the largest are cut, each with a
 *        notice the model reads, and a warning on context.log. The same file reached twice (CLAUDE.md a symlink to
 *        AGENTS.md) is read once
 */
export const loadProjectInstructions = async (
  input: { cwd: string; maxBytes?: number },
  context: { env?: Record<string, string | undefined>; log?: BrainLog } = {},
): Promise<ProjectInstructions> => {
  const log = context.log ?? silentLog;
  const maxBytes = input.maxBytes ?? DEFAULT_PROJECT_INSTRUCTIONS_MAX_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new BadRequestError(`loadProjectInstructions: maxBytes must be a whole number of bytes of at least 1, got ${maxBytes}`);
  const cwd = resolve(input.cwd);
  const repoRoot = await findRepoRoot({ cwd });
  const candidates = [
    ...PROJECT_INSTRUCTION_FILE_NAMES.map((name) => ({
      path: join(getBhrainConfigDir(context.env ?? process.env), name),
      scope: 'user' as const,
    })),
    ...listProjectDirs(cwd, repoRoot).flatMap((dir) =>
      PROJECT_INSTRUCTION_FILE_NAMES.map((name) => ({ path: join(dir, name), scope: 'project' as const })),
    ),
  ];

  const found: Array<{ path: string; scope: 'user' | 'project'; text: string; bytes: number }> = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const file = await readInstructionFile(candidate.path, maxBytes, log);
    if (!file) continue;
    const real = await realpath(candidate.path).catch(() => candidate.path);
    if (seen.has(real)) continue;
    seen.add(real);
    found.push({ ...candidate, ...file });
  }

  const kept = shareBytes(
    found.map((file) => file.bytes),
    maxBytes,
  );
  const elements = found.map((file, index) => {
    const head = `<file path="${asAttribute(file.path)}">`;
    if (kept[index] === file.bytes) return `${head}\n${file.text.trimEnd()}\n</file>`;
    const rest = `project instructions are capped at ${maxBytes} bytes in all, shared among the files. Read the file for the rest.]`;
    if (kept[index] === 0) return `${head}\n[bhrain: this file (${file.bytes} bytes) was left out: ${rest}\n</file>`;
    const cutText = cutUtf8(file.text, kept[index]);
    return `${head}\n${cutText}\n[bhrain: this file was cut here, after ${Buffer.byteLength(cutText)} of its ${file.bytes} bytes: ${rest}\n</file>`;
  });
  const files = found.map((file, index): ProjectInstructionFile => ({
    path: file.path,
    scope: file.scope,
    bytes: file.bytes,
    keptBytes: kept[index],
  }));
  const cutFiles = files.filter((file) => file.keptBytes < file.bytes);
  if (cutFiles.length)
    log.warn(
      `project instructions are over the cap of ${maxBytes} bytes: ${cutFiles
        .map((file) =>
          file.keptBytes ? `${file.path} cut to ${file.keptBytes} of ${file.bytes} bytes` : `${file.path} (${file.bytes} bytes) left out`,
        )
        .join('; ')}. The model is told to read them for the rest`,
    );
  log.debug(`project instructions: ${files.length ? files.map((file) => file.path).join(', ') : 'none found'}`);
  return { text: elements.join('\n'), files, repoRoot, cut: cutFiles.length > 0 };
};

import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

import { BadRequestError } from '../../core/contract/errors.js';

const require = createRequire(import.meta.url);
const ELF_OR_MACHO = [Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.from([0xcf, 0xfa, 0xed, 0xfe])];
const resolved = new Map<string, string>();

/** .what = whether a path is an executable regular file */
const isExecutableFile = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** .what = whether an executable file starts with an ELF or Mach-O header; reads those 4 bytes only, never the binary */
const isNativeBinary = (path: string): boolean => {
  if (!isExecutableFile(path)) return false;
  const head = Buffer.alloc(4);
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    readSync(fd, head, 0, 4, 0);
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
  return ELF_OR_MACHO.some((magic) => head.equals(magic));
};

/**
 * .what = the path of the claude CLI: an explicit executable (option or CLAUDE_CODE_EXECUTABLE), else the installed
 *         @anthropic-ai/claude-code native binary, else its platform package's, else the first executable `claude` on PATH
 * .why = the npm package's bin is a placeholder stub until its postinstall runs, so only a native binary counts from the
 *        packages; a `claude` on PATH may be any launcher. Resolved once per process for the same inputs.
 */
export const resolveClaudeBinary = (
  input: { executable?: string },
  context: { env: Record<string, string | undefined>; resolvePackage?: (specifier: string) => string },
): string => {
  const explicit = input.executable ?? context.env.CLAUDE_CODE_EXECUTABLE;
  if (explicit) {
    if (!isExecutableFile(explicit))
      throw new BadRequestError(
        `the claude CLI named by ${input.executable ? 'the executable option' : 'CLAUDE_CODE_EXECUTABLE'} is not an executable file: ${explicit}`,
      );
    return explicit;
  }
  const resolvePackage = context.resolvePackage ?? require.resolve;
  const key = `${context.resolvePackage ? 'custom' : 'require'}\0${context.env.PATH ?? ''}`;
  const cached = resolved.get(key);
  if (cached && isExecutableFile(cached)) return cached;
  const fromPackage = (specifier: string, file: string[]) => {
    try {
      return join(dirname(resolvePackage(`${specifier}/package.json`)), ...file);
    } catch {
      return null; // not installed
    }
  };
  const packaged = [
    fromPackage('@anthropic-ai/claude-code', ['bin', 'claude.exe']),
    fromPackage(`@anthropic-ai/claude-code-${process.platform}-${process.arch}`, ['claude']),
  ].filter((path): path is string => path !== null);
  const onPath = (context.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'claude'));
  const found = packaged.find(isNativeBinary) ?? onPath.find(isExecutableFile);
  if (!found)
    throw new BadRequestError(
      'the claude CLI was not found: install @anthropic-ai/claude-code (npm install @anthropic-ai/claude-code), put `claude` on PATH, or set CLAUDE_CODE_EXECUTABLE',
    );
  resolved.set(key, found);
  return found;
};

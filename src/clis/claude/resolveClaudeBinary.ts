import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

import { BadRequestError } from '../../contract/errors.js';

const require = createRequire(import.meta.url);
const ELF_OR_MACHO = [Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.from([0xcf, 0xfa, 0xed, 0xfe])];

/** .what = whether a file is an executable native binary (not the npm package's placeholder stub) */
const isNativeBinary = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    const head = readFileSync(path).subarray(0, 4);
    return ELF_OR_MACHO.some((magic) => head.equals(magic));
  } catch {
    return false;
  }
};

/**
 * .what = the path of the claude CLI: the installed @anthropic-ai/claude-code binary, else its platform package, else PATH
 * .why = the npm package ships a native binary; its postinstall may not have run (install scripts off), so the platform
 *        package's own binary is tried too, before any `claude` on PATH
 */
export const resolveClaudeBinary = (env: Record<string, string | undefined> = process.env): string => {
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'bin', 'claude.exe'));
  } catch {
    // not installed as a package: PATH below
  }
  const platform = `${process.platform}-${process.arch}`;
  try {
    candidates.push(join(dirname(require.resolve(`@anthropic-ai/claude-code-${platform}/package.json`)), 'claude'));
  } catch {
    // no platform package: PATH below
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) candidates.push(join(dir, 'claude'));
  const found = candidates.find(isNativeBinary) ?? candidates.slice(2).find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (!found)
    throw new BadRequestError(
      'the claude CLI was not found: install @anthropic-ai/claude-code (npm install @anthropic-ai/claude-code) or put `claude` on PATH',
    );
  return found;
};
